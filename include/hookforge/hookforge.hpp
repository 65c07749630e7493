// hookforge/hookforge.hpp — the torch-free core (targets hookforge::core and hookforge::hookforge):
// points, bindings, batch fields, checks, static dispatch, wrappers, runtime hooks, binding tables.
#pragma once

#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/binding.hpp"
#include "hookforge/core/binding_table.hpp"
#include "hookforge/core/checks.hpp"  // first included here: keeps its "included from" chain short
#include "hookforge/core/field_checks.hpp"  // the same
#include "hookforge/core/fields.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/hook_set.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runner.hpp"
#include "hookforge/core/runtime/any_hook.hpp"
#include "hookforge/core/runtime/attach_policy.hpp"
#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/field_flow.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/core/wrappers/filter.hpp"
#include "hookforge/core/wrappers/gate.hpp"
#include "hookforge/core/wrappers/keyed.hpp"
#include "hookforge/core/wrappers/rebind.hpp"
#include "hookforge/core/wrappers/ref.hpp"
#include "hookforge/core/wrappers/with_priority.hpp"
