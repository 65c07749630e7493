// An umbrella that gathers another folder.
#pragma once
#include "hookforge/dist/reaches.hpp"
#include "hookforge/torch/entry.hpp"
