// hookforge/torch/weights/pth.hpp — PyTorch's torch.save archives (.pth, .pt, Lightning's
// .ckpt, MMEngine's checkpoints), read and written without Python.
//
// Since PyTorch 1.6 torch.save writes a zip (read and written here with LibTorch's own
// caffe2::serialize::PyTorchStreamReader and Writer): `<name>/data.pkl`, a pickle of the
// saved object whose tensors refer by persistent id to storages, each the record
// `<name>/data/<key>` of raw little-endian bytes, and `<name>/byteorder`. The pickle is read
// by the restricted unpickler (detail/unpickler.hpp): nothing in it runs. Only the storages
// of the tensors taken are read, each once: tensors that shared a storage in Python share it
// here. A storage's record must hold exactly the bytes its persistent id claims, checked
// before it is read (the record's size from the zip's directory, where LibTorch tells it).
//
// Written: an OrderedDict of tensors, pickled as torch.save pickles a state_dict (protocol
// 2, _rebuild_tensor_v2, the legacy storage classes), one storage per storage of the given
// tensors (ties and views kept), in a zip that PyTorchStreamWriter lays out as torch.save
// does. Python's torch.load reads it with weights_only=True, its default since 2.6.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/weights/named_tensors.hpp"

namespace hookforge::detail::pth {

/// The first bytes of a zip archive ("PK\3\4").
inline constexpr std::string_view zip_signature{"PK\x03\x04", 4};

/// True when `head` starts like torch.save's format before 1.6 (a pickled magic number).
HOOKFORGE_INLINE bool looks_legacy(std::string_view head);

/// The weights of a torch.save archive and the entry of the file they were in.
struct contents {
  named_tensors tensors;
  std::string entry;                       ///< empty: the whole file
  std::vector<std::string> other_entries;  ///< the file's other entries that hold tensors
};

/// The weights of the torch.save archive `file`: the entry `key`, or the one found
/// (weights_file.hpp says how); `opaque_globals` adds to the unpickler's opaque ones.
HOOKFORGE_INLINE contents read(const std::filesystem::path& file, const std::string& key,
                               const std::vector<std::string>& opaque_globals);

/// Writes `tensors` as a state_dict Python's torch.load reads, atomically.
HOOKFORGE_INLINE void write(const std::filesystem::path& file, const named_tensors& tensors);

}  // namespace hookforge::detail::pth

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/pth-inl.hpp"
#endif
