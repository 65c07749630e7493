// A hook that reaches into the torch layer's machinery.
#pragma once
#include "hookforge/torch/detail/impl.hpp"
