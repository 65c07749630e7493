// hookforge/torch/weights/safetensors.hpp — the safetensors format (Hugging Face's, timm's),
// read and written without Python.
//
//   offset  size  field
//        0     8  N, the header's length in bytes, little-endian
//        8     N  a JSON object: {"name": {"dtype": "F32", "shape": [2, 3],
//                 "data_offsets": [begin, end]}, ..., "__metadata__": {"k": "v"}}
//      8+N     …  the data: each tensor's bytes, little-endian, row-major, at
//                 [begin, end) from here
//
// Reading validates the whole header before a tensor is allocated: N at most 100 MB and
// within the file, JSON (nlohmann's parser) nested no deeper than the format is, no key
// twice, each entry exactly dtype, shape and data_offsets, its dtype known (and one the
// LibTorch in use has), its shape's element count times the dtype's size equal to its byte
// range, and the ranges covering the data from its start to the end of the file without
// holes or overlaps (as Hugging Face's library requires); `__metadata__` maps strings to
// strings. A file that breaks any of these throws hookforge::checkpoint_error naming the
// file, the tensor and what was expected. The data are read through mmap where the file can
// be mapped, and copied out once into tensors that own their memory.
//
// Writing lays the tensors out in the given order, each contiguous on the CPU; a tensor
// that shares storage with another is written as a copy of its own (the format has no
// aliasing). The file is written atomically (io/atomic_file.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/weights/named_tensors.hpp"

namespace hookforge::detail::safetensors {

/// A safetensors file's tensors (in the header's order of data offsets) and its
/// `__metadata__` (string to string).
struct contents {
  named_tensors tensors;
  std::map<std::string, std::string> metadata;
};

/// True when the first bytes of a file (at least 9 of them) look like a safetensors
/// header: a length that leaves room for the JSON and a JSON object that starts right away.
HOOKFORGE_INLINE bool looks_like(const unsigned char* head, std::size_t size,
                                 std::uintmax_t file_size);

/// Reads and validates `file` (see the top of this file).
HOOKFORGE_INLINE contents read(const std::filesystem::path& file);

/// Writes `tensors` (any device, any dtype safetensors has) and `metadata` to `file`.
/// Throws std::invalid_argument, before the file is touched, for a dtype the format lacks, a
/// name given twice or named `__metadata__`, a name or metadata string that is not UTF-8, or
/// an undefined, sparse or meta tensor; std::filesystem::filesystem_error when writing fails
/// (the target keeps what it held).
HOOKFORGE_INLINE void write(const std::filesystem::path& file, const named_tensors& tensors,
                            const std::map<std::string, std::string>& metadata = {});

}  // namespace hookforge::detail::safetensors

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/safetensors-inl.hpp"
#endif
