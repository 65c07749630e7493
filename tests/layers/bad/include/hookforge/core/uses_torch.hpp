// A core header that needs the torch layer.
#pragma once
#include "hookforge/torch/entry.hpp"
