// A distributed header that reaches into the hooks layer's machinery.
#pragma once
#include "hookforge/torch/entry.hpp"
#include "hookforge/hooks/detail/machinery.hpp"
