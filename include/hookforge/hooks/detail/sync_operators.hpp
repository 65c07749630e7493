// hookforge/hooks/detail/sync_operators.hpp — which ATen operators make the host wait for a
// CUDA device: what SyncAudit counts.
//
// The list is the places where ATen's CUDA kernels call c10's synchronising helpers
// (memcpy_and_sync, stream_synchronize: what sync-debug mode warns at) and those PyTorch's
// test_sync_warning holds to it:
//   host reads of a value     aten::item, aten::_local_scalar_dense (item(), bool(), float()),
//                             aten::is_nonzero, aten::equal, aten::allclose
//   outputs sized by data     aten::nonzero, aten::nonzero_numpy, aten::argwhere,
//                             aten::masked_select, aten::unique and its variants,
//                             aten::bincount, aten::histc, aten::_linalg_check_errors,
//                             aten::where with the condition alone,
//                             aten::repeat_interleave without output_size,
//                             aten::index / index_put_ with a boolean (or uint8) mask
//   blocking copies           aten::copy_ between the CPU and a GPU with non_blocking false
// Each is an operator on the CPU too, so a CPU run finds the first two groups where a GPU run
// would synchronise. Known limits:
//   - a copy to the host happens only where the tensor is on a GPU: on a CPU run a hook's
//     `.cpu()` is no copy at all, and only a GPU run (scripts/gpu_check.sh) shows it;
//   - an index tensor on the wrong device (a CPU index into a CUDA tensor) is copied inside
//     the kernel, and only a GPU run shows it, as a copy;
//   - operators outside ATen (a custom CUDA extension, cudaDeviceSynchronize called
//     directly, torch.cuda.synchronize) are not RecordFunction operators and are not seen.
// An operator is counted where the caller's code calls it, once: aten::item's own
// aten::_local_scalar_dense is part of it. Inside another operator only a blocking copy counts
// (aten::to's copy_ to the host), since whether a kernel reads a value on the host depends on
// the device it runs on.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

namespace hookforge::detail::sync {

/// The operators that always synchronise on CUDA, sorted.
inline constexpr std::array<std::string_view, 18> always = {"aten::_linalg_check_errors",
                                                            "aten::_local_scalar_dense",
                                                            "aten::_unique",
                                                            "aten::_unique2",
                                                            "aten::allclose",
                                                            "aten::argwhere",
                                                            "aten::bincount",
                                                            "aten::equal",
                                                            "aten::histc",
                                                            "aten::is_nonzero",
                                                            "aten::item",
                                                            "aten::masked_select",
                                                            "aten::nonzero",
                                                            "aten::nonzero_numpy",
                                                            "aten::unique",
                                                            "aten::unique_consecutive",
                                                            "aten::unique_dim",
                                                            "aten::unique_dim_consecutive"};
static_assert(std::is_sorted(always.begin(), always.end()));

inline bool always_synchronises(std::string_view name) {
  return std::binary_search(always.begin(), always.end(), name);
}

inline bool is_mask(const c10::IValue& index) {
  if (!index.isTensor()) return false;
  const auto type = index.toTensor().scalar_type();
  return type == c10::ScalarType::Bool || type == c10::ScalarType::Byte;
}

/// index, index_put_: a boolean mask among the indices is turned into positions by nonzero.
inline bool indexes_by_mask(const c10::IValue& indices) {
  if (!indices.isList()) return false;
  for (const auto& index : indices.toListRef())
    if (is_mask(index)) return true;
  return false;
}

/// copy_(self, src, non_blocking): a blocking copy between the host and a GPU.
inline std::optional<std::string_view> blocking_copy(c10::ArrayRef<const c10::IValue> in) {
  if (in.size() < 2 || !in[0].isTensor() || !in[1].isTensor()) return std::nullopt;
  const bool non_blocking = in.size() > 2 && in[2].isBool() && in[2].toBool();
  const auto to = in[0].toTensor().device(), from = in[1].toTensor().device();
  if (non_blocking || to == from || (to.is_cpu() == from.is_cpu())) return std::nullopt;
  return to.is_cpu() ? "aten::copy_ (device to host)" : "aten::copy_ (host to device)";
}

/// The name to count `fn` under when it synchronises the host with a CUDA device, or
/// nullopt. `fn` must carry its inputs (RecordFunctionCallback::needsInputs). Called by an
/// operator, only a blocking copy counts: the rest is how that operator's kernel on this
/// device works (the CPU fused Adam reads each step count with item(); the CUDA one does not).
inline std::optional<std::string_view> synchronising(const at::RecordFunction& fn,
                                                     bool called_by_an_operator) {
  const std::string_view name = fn.name();
  if (!name.starts_with("aten::")) return std::nullopt;
  const auto in = fn.inputs();
  if (name == "aten::copy_") return blocking_copy(in);
  if (called_by_an_operator) return std::nullopt;
  if (always_synchronises(name)) return name;
  if (name == "aten::where" && in.size() == 1) return "aten::where (condition only)";
  if (name == "aten::repeat_interleave" && in.size() >= 2 && in.back().isNone() &&
      (in[0].isTensor() && (in.size() == 2 || (in.size() == 4 && in[1].isTensor()))))
    return "aten::repeat_interleave (no output_size)";
  if ((name == "aten::index" || name == "aten::index_put_" || name == "aten::_index_put_impl_") &&
      in.size() >= 2 && indexes_by_mask(in[1]))
    return name == "aten::index" ? "aten::index (boolean mask)" : "aten::index_put_ (boolean mask)";
  return std::nullopt;
}

}  // namespace hookforge::detail::sync
