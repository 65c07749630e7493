// hookforge/torch/compat.hpp — what differs between the LibTorches hookforge supports.
//
// hookforge is built and tested against Debian's LibTorch 1.13.1 and the pip wheel's 2.11.0
// (docs/libtorch.md). Every difference between them that hookforge's code or tests meet is
// here, once, named with the release that changed it; no other header tests the version.
// The CMake side (the wheel's bundled {fmt}, finding the right libc10) is in
// cmake/torch_compat.cmake.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Device.h>
#include <torch/version.h>

/// LibTorch's version as one number: 2.11.0 is 21100, 1.13.1 is 11301.
#define HOOKFORGE_TORCH_VERSION \
  (TORCH_VERSION_MAJOR * 10000 + TORCH_VERSION_MINOR * 100 + TORCH_VERSION_PATCH)

// c10d's backends (ProcessGroupGloo, ProcessGroupNCCL) derive from c10d::Backend since 2.0,
// which split it out of c10d::ProcessGroup (1.13: the backends are ProcessGroups).
// hookforge/distributed/process_group.hpp includes the header and names the type through these.
#if HOOKFORGE_TORCH_VERSION >= 20000
#define HOOKFORGE_C10D_BACKEND_HEADER <torch/csrc/distributed/c10d/Backend.hpp>
#define HOOKFORGE_C10D_BACKEND c10d::Backend
#else
#define HOOKFORGE_C10D_BACKEND_HEADER <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define HOOKFORGE_C10D_BACKEND c10d::ProcessGroup
#endif

// hookforge's own CUDA calls (EmptyCache's allocator release, IterTimer's events) compile
// only against a CUDA build of LibTorch: Debian's CPU LibTorch ships <c10/cuda/...>
// headers but not the <c10/cuda/impl/cuda_cmake_macros.h> they include, nor libc10_cuda,
// and the CUDA runtime's <cuda_runtime_api.h> must be found too (the toolkit alone is not
// enough). Define HOOKFORGE_NO_CUDA to leave them out in any case (a CPU LibTorch on a
// machine with the CUDA toolkit would otherwise fail to link).
#if !defined(HOOKFORGE_NO_CUDA) && __has_include(<c10/cuda/impl/cuda_cmake_macros.h>) && \
    __has_include(<cuda_runtime_api.h>)
#define HOOKFORGE_HAS_CUDA 1
#else
#define HOOKFORGE_HAS_CUDA 0
#endif

// The dtypes torch.save writes as an UntypedStorage with a dtype (torch._utils._rebuild_tensor_v3):
// uint16, uint32 and uint64 came in 2.3, with the float8 types (2.1) before them; 1.13 has
// none. The weights readers refuse them by name where this is 0.
#define HOOKFORGE_HAS_UNSIGNED_DTYPES (HOOKFORGE_TORCH_VERSION >= 20300)

// The profiler's Chrome traces (ProfilerResult::save) need a LibTorch built with Kineto: the
// pip wheels (2.x) are; Debian's 1.13 is not (its changelog: USE_KINETO=OFF), where save()
// throws, and its KinetoEvent counts microseconds where 2.x counts nanoseconds. ProfilerHook
// refuses to be built where this is 0.
#define HOOKFORGE_HAS_KINETO_TRACES (HOOKFORGE_TORCH_VERSION >= 20000)

// The microscaling dtypes float8_e8m0fnu (2.7) and float4_e2m1fn_x2 (2.8).
#define HOOKFORGE_HAS_MICROSCALING_DTYPES (HOOKFORGE_TORCH_VERSION >= 20800)

// caffe2::serialize::PyTorchStreamReader::getRecordSize, a record's size without reading it
// (2.x; 1.13's getRecord allocates what the zip's directory claims). The .pth reader checks
// a record's size against the file first where it can (weights/pth.hpp).
#define HOOKFORGE_HAS_ZIP_RECORD_SIZE (HOOKFORGE_TORCH_VERSION >= 20300)

#if HOOKFORGE_TORCH_VERSION < 20200
#include <c10/util/C++17.h>  // c10::guts::to_string, removed in 2.2
#endif

namespace hookforge::compat {

/// Whether this LibTorch is at least `major.minor`.
constexpr bool torch_at_least(int major, int minor) {
  return TORCH_VERSION_MAJOR > major ||
         (TORCH_VERSION_MAJOR == major && TORCH_VERSION_MINOR >= minor);
}

/// Whether this LibTorch has a kernel of ATen operator `op` ("aten::_fused_adam_") for float
/// tensors on `device`. The fused kernels differ by release and build: CUDA builds have them
/// for cuda; CPU kernels came later (below). hookforge asks at run time, so one binary uses
/// whatever the LibTorch it runs with has.
inline bool has_kernel(const char* op, c10::Device device) {
  const auto key = c10::TensorOptions().dtype(c10::kFloat).device(device).computeDispatchKey();
  const auto schema = c10::Dispatcher::singleton().findSchema(c10::OperatorName(op, ""));
  return schema.has_value() && schema->hasKernelForDispatchKey(key);
}

/// Whether ATen has CPU kernels of `_amp_foreach_non_finite_check_and_unscale_` and
/// `_amp_update_scale_` (added in 2.3; 1.13 has CUDA kernels only). GradScaler asks the
/// dispatcher at run time instead; the tests use this to know what to expect.
inline constexpr bool has_cpu_fused_amp = torch_at_least(2, 3);

/// Whether ATen has a CPU kernel of `_fused_adam_` (added in 2.4; 1.13 has a CUDA kernel only).
/// FusedAdam asks the dispatcher at run time; the tests use this to know what to expect.
inline constexpr bool has_cpu_fused_adam = torch_at_least(2, 4);

/// The key of parameter `p` in `torch::optim::Optimizer::state()`: the parameter's
/// TensorImpl address, as a `void*` since 2.2, printed to a string before (1.13).
#if HOOKFORGE_TORCH_VERSION >= 20200
inline void* optimizer_state_key(const at::Tensor& p) { return p.unsafeGetTensorImpl(); }
#else
inline std::string optimizer_state_key(const at::Tensor& p) {
  return c10::guts::to_string(p.unsafeGetTensorImpl());
}
#endif

}  // namespace hookforge::compat
