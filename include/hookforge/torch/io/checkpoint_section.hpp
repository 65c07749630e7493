// hookforge/torch/io/checkpoint_section.hpp — what every section kind's codec shares: a
// stored section as its decoder sees it (archive, name, file), the errors naming the file,
// shapes in messages.
//
// Each kind encodes into the section's torch::serialize::OutputArchive, beside its "kind"
// entry, and decodes from a stored_section: checkpoint_module.hpp, checkpoint_optimizer.hpp,
// checkpoint_rng.hpp, checkpoint_values.hpp. checkpoint.hpp's writer and reader open and
// close the sections and call them.
#pragma once

#include <filesystem>
#include <string>

#include <ATen/core/ivalue.h>
#include <c10/util/ArrayRef.h>
#include <torch/serialize/input-archive.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge::detail::ckpt {

// Throws the checkpoint_error "hookforge checkpoint '<file>': <message>".
[[noreturn]] HOOKFORGE_INLINE void fail(const std::filesystem::path& file,
                                        const std::string& message);

// The value at `key` of `archive` (c10::Error when it has none).
HOOKFORGE_INLINE c10::IValue read_value(torch::serialize::InputArchive& archive,
                                        const std::string& key);

// "[2, 3]".
HOOKFORGE_INLINE std::string shape_string(c10::IntArrayRef sizes);

// A section of the checkpoint being read, as its kind's decoder sees it: its archive, its
// name and the file, which every error names. Valid while the reader that made it lives.
struct stored_section {
  const std::filesystem::path& file;
  const std::string& name;
  torch::serialize::InputArchive& archive;

  // The value at `key` of the section (c10::Error when it has none).
  HOOKFORGE_INLINE c10::IValue read(const std::string& key) const;

  // Throws the checkpoint_error "hookforge checkpoint '<file>': <message>".
  [[noreturn]] HOOKFORGE_INLINE void fail(const std::string& message) const;
};

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_section-inl.hpp"
#endif
