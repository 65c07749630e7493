// hookforge/core/runtime/attach_policy.hpp — how attaching a runtime hook reacts to one that binds
// nowhere.
//
// Apart from runtime_hooks.hpp so hook_pack.hpp can name it in attach() without
// pulling in the runtime layer.
#pragma once

namespace hookforge {

/// How attaching reacts to a hook that binds nowhere.
struct attach_policy {
  bool strict = false;  ///< throw binding_error instead of warning
};

}  // namespace hookforge
