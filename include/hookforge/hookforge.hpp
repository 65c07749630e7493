// hookforge/hookforge.hpp — the whole torch-free core.
#pragma once

#include "hookforge/core/any_hook.hpp"
#include "hookforge/core/binding.hpp"
#include "hookforge/core/binding_table.hpp"
#include "hookforge/core/filter.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/keyed.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/rebind.hpp"
#include "hookforge/core/ref.hpp"
#include "hookforge/core/runtime_hooks.hpp"
#include "hookforge/core/warning.hpp"
#include "hookforge/core/with_priority.hpp"
