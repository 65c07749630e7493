// hookforge/torch/weights/detail/pickler.hpp — a state_dict pickled as torch.save pickles one,
// for Python's torch.load to read with weights_only=True.
//
// The pickle (protocol 2, torch.save's default) is an OrderedDict of name to
// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict()), each
// storage a persistent id ('storage', torch.<Type>Storage, key, 'cpu', numel). Tensors that
// share a storage share its key, so ties and views survive the trip.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <c10/core/Storage.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/weights/named_tensors.hpp"

namespace hookforge::detail::pickle {

struct state_dict_contents {
  std::string pickle;                                          ///< data.pkl
  std::vector<std::pair<std::string, c10::Storage>> storages;  ///< data/<key>, on the CPU
};

/// The pickle and storages of `tensors`. Throws std::invalid_argument for an undefined
/// tensor, a name given twice, or a dtype that has no legacy storage class (those since
/// PyTorch 2.3: uint16, uint32, uint64, float8; write them as safetensors).
HOOKFORGE_INLINE state_dict_contents state_dict_pickle(const named_tensors& tensors);

}  // namespace hookforge::detail::pickle

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/detail/pickler-inl.hpp"
#endif
