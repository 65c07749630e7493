// An umbrella that gathers another folder.
#pragma once
#include "hookforge/distributed/reaches.hpp"
#include "hookforge/torch/entry.hpp"
