// hookforge/images.hpp — image files and image datasets (target hookforge::images):
// PNG and JPEG reading (libpng, libjpeg-turbo), colour, the bicubic degradation of
// super-resolution, and ImageFolder. docs/data.md describes them.
#pragma once

#include "hookforge/images/color.hpp"
#include "hookforge/images/image_file.hpp"
#include "hookforge/images/image_folder.hpp"
#include "hookforge/images/resize.hpp"
