// hookforge/torch/weights/detail/pickle_globals.hpp — the allow-list of the restricted
// unpickler (unpickler.hpp) and what each allowed global builds, without calling anything.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/weights/detail/pickle_value.hpp"

namespace hookforge::detail::pickle {

/// Throws the unpickler's located error.
using failure = std::function<void(const std::string&)>;

/// True for a global this reader builds a value for ("torch._utils._rebuild_tensor_v2").
HOOKFORGE_INLINE bool allowed_global(std::string_view name);

/// The element type of a storage class ("torch.FloatStorage"), Undefined for another name.
HOOKFORGE_INLINE c10::ScalarType storage_dtype(std::string_view name);

/// Whether a global names a dtype of PyTorch's, one this LibTorch has or not.
HOOKFORGE_INLINE bool names_dtype(std::string_view name);

/// The dtype a global names ("torch.float32"), Undefined for another name or one this
/// LibTorch lacks.
HOOKFORGE_INLINE c10::ScalarType dtype_global(std::string_view name);

/// What the allowed global `name` returns for `args` (a tuple). `make` keeps a new container
/// in the unpickler's arena. Calls `fail` for arguments that do not fit.
HOOKFORGE_INLINE value_ptr apply_global(const std::string& name, const value& args,
                                        const std::function<value_ptr(value::kind)>& make,
                                        const failure& fail);

/// A tensor recipe from _rebuild_tensor_v2's arguments, checked to lie inside its storage.
HOOKFORGE_INLINE value_ptr rebuild_tensor(const value& storage, const value& offset,
                                          const value& sizes, const value& strides,
                                          c10::ScalarType dtype, const failure& fail);

}  // namespace hookforge::detail::pickle

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/detail/pickle_globals-inl.hpp"
#endif
