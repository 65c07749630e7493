// hookforge/torch/io/checkpoint_section-inl.hpp — the section codecs' shared pieces'
// definitions: included by checkpoint_section.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <ATen/core/ivalue.h>
#include <c10/util/ArrayRef.h>
#include <torch/serialize/input-archive.h>

#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE void fail(const std::filesystem::path& file, const std::string& message) {
  throw checkpoint_error("hookforge checkpoint '" + file.string() + "': " + message);
}

HOOKFORGE_INLINE c10::IValue read_value(torch::serialize::InputArchive& archive,
                                        const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value;
}

HOOKFORGE_INLINE std::string shape_string(c10::IntArrayRef sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

HOOKFORGE_INLINE c10::IValue stored_section::read(const std::string& key) const {
  return read_value(archive, key);
}

HOOKFORGE_INLINE void stored_section::fail(const std::string& message) const {
  ckpt::fail(file, message);
}

}  // namespace hookforge::detail::ckpt
