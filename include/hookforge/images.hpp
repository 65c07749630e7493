// hookforge/images.hpp — image files and image datasets (target hookforge::images):
// PNG and JPEG reading (libpng, libjpeg-turbo), colour, the bicubic degradation of
// super-resolution, and ImageFolder; the pixel budget every reader checks. docs/data.md
// describes them.
#pragma once

#include "hookforge/images/color.hpp"
#include "hookforge/images/image_error.hpp"
#include "hookforge/images/image_file.hpp"
#include "hookforge/images/image_folder.hpp"
#include "hookforge/images/image_limits.hpp"
#include "hookforge/images/resize.hpp"
