// hookforge/torch/weights/safetensors-inl.hpp — the safetensors reader and writer: included by
// safetensors.hpp header-only, compiled into hookforge::torch_compiled otherwise.
//
// The rules are the format's README and what the Rust library (safetensors/src/tensor.rs,
// which Python's safetensors runs) enforces, so that the files one reads the other reads,
// but for a few that only a hand or a hostile writer makes, refused here by name: a header
// that does not start with '{' (the README's MUST; serde skips leading whitespace), a key
// given twice (the README disallows it; serde keeps one), an entry's unknown keys (serde
// ignores them), a BOOL byte other than 0 or 1, and a shape whose strides overflow
// LibTorch's int64_t (one with a 0 holds nothing, so Rust does not multiply it all).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>
#include <torch/types.h>
#include <torch/version.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/io/file_descriptor.hpp"
#include "hookforge/torch/weights/detail/safetensors_dtypes-inl.hpp"
#include "hookforge/torch/weights/detail/safetensors_header-inl.hpp"
#include "hookforge/torch/weights/safetensors.hpp"

namespace hookforge::detail::safetensors {

// A BOOL byte other than 0 or 1 would be undefined behaviour as a C++ bool in LibTorch's
// kernels; the format says nothing of it, the writers never write one.
HOOKFORGE_INLINE void check_bools(const std::filesystem::path& file, const entry& e,
                                  const torch::Tensor& t) {
  const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
  const std::uint64_t n = e.end - e.begin;
  for (std::uint64_t i = 0; i < n; ++i)
    if (bytes[i] > 1)
      fail(file, "tensor '" + e.name + "' (BOOL) holds the byte " + std::to_string(bytes[i]) +
                     " at element " + std::to_string(i) + "; a BOOL is 0 or 1");
}

HOOKFORGE_INLINE torch::Tensor load_tensor(const std::filesystem::path& file,
                                           const file_bytes& bytes, const entry& e,
                                           std::uint64_t data_start) {
  torch::Tensor t;
  try {
    t = torch::empty(e.sizes, torch::TensorOptions().dtype(e.dtype->type));
  } catch (const c10::Error& error) {  // out of memory
    fail(file, "tensor '" + e.name + "' cannot be allocated: " + error.what_without_backtrace());
  }
  const std::uint64_t n = e.end - e.begin;
  if (n == 0) return t;
  bytes.copy(t.data_ptr(), data_start + e.begin, static_cast<std::size_t>(n));
  if (e.dtype->type == c10::ScalarType::Bool) check_bools(file, e, t);
  return t;
}

HOOKFORGE_INLINE bool looks_like(const unsigned char* head, std::size_t size,
                                 std::uintmax_t file_size) {
  if (size < 9 || file_size < 8) return false;
  const std::uint64_t n = load_le64(head);
  return n >= 2 && n <= file_size - 8 && head[8] == '{';
}

HOOKFORGE_INLINE contents read(const std::filesystem::path& file) {
  check_little_endian(file);
  const file_bytes bytes(file);
  const std::uint64_t n = header_length(file, bytes);
  json header;
  {
    std::string text(static_cast<std::size_t>(n), '\0');
    bytes.copy(text.data(), 8, text.size());
    header = parse_header(file, text);
  }
  const std::uint64_t data_start = 8 + n, data_size = bytes.size() - data_start;
  contents out;
  std::vector<entry> entries;
  for (const auto& item : header.items()) {
    if (item.key() == metadata_key)
      out.metadata = parse_metadata(file, item.value());
    else
      entries.push_back(parse_entry(file, item.key(), item.value(), data_size));
  }
  check_coverage(file, entries, data_size);
  for (const auto& e : entries)
    out.tensors.emplace_back(e.name, load_tensor(file, bytes, e, data_start));
  return out;
}

// The format's dtype of `t`; std::invalid_argument for one it lacks.
HOOKFORGE_INLINE const dtype_info& dtype_of(const std::filesystem::path& file,
                                            const std::string& name, const torch::Tensor& t) {
  for (const auto& d : dtypes)
    if (d.type != c10::ScalarType::Undefined && d.type == t.scalar_type()) return d;
  refuse(file, "tensor '" + name + "' has dtype " + std::string(c10::toString(t.scalar_type())) +
                   ", which safetensors cannot store");
}

// JSON text of a string, or std::invalid_argument naming `what` when it is not UTF-8.
HOOKFORGE_INLINE std::string json_string(const std::filesystem::path& file, const std::string& s,
                                         const std::string& what) {
  try {
    return json(s).dump();
  } catch (const json::type_error&) {
    refuse(file, what + " is not valid UTF-8, which the JSON header needs");
  }
}

// `"name":{"dtype":...,"shape":[...],"data_offsets":[begin,end]}`; advances `offset` past
// the tensor's bytes.
HOOKFORGE_INLINE std::string header_entry(const std::filesystem::path& file,
                                          const std::string& name, const torch::Tensor& t,
                                          std::uint64_t& offset) {
  const std::string key = json_string(file, name, "the tensor name '" + printable(name) + "'");
  const std::string tensor = "tensor '" + name + "'";
  if (!t.defined()) refuse(file, tensor + " is undefined");
  if (t.layout() != torch::kStrided) refuse(file, tensor + " is not dense (safetensors is)");
  if (t.is_meta()) refuse(file, tensor + " is on the meta device and has no data");
  const dtype_info& dtype = dtype_of(file, name, t);
  std::vector<std::uint64_t> shape(t.sizes().begin(), t.sizes().end());
  if (dtype.type == f4_type) {
    if (shape.empty()) refuse(file, tensor + " is an F4 scalar, which the format cannot hold");
    shape.back() *= 2;  // LibTorch counts pairs, the format elements
  }
  const auto bytes = static_cast<std::uint64_t>(t.numel()) * t.element_size();
  nlohmann::ordered_json info = {
      {"dtype", dtype.name}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
  offset += bytes;
  return key + ":" + info.dump();
}

// The header: __metadata__ (when there are any) first, as the Rust library writes it, then
// the tensors in the given order, padded with spaces to a multiple of 8 bytes as it does.
HOOKFORGE_INLINE std::string header_text(const std::filesystem::path& file,
                                         const named_tensors& tensors,
                                         const std::map<std::string, std::string>& metadata) {
  std::vector<std::string> items;
  if (!metadata.empty()) {
    std::vector<std::string> pairs;
    for (const auto& [key, value] : metadata)
      pairs.push_back(
          json_string(file, key, "the metadata key '" + printable(key) + "'") + ":" +
          json_string(file, value, "the value of metadata key '" + printable(key) + "'"));
    items.push_back("\"__metadata__\":{" + join_names(pairs, ",") + "}");
  }
  std::set<std::string_view> names;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == metadata_key) refuse(file, "a tensor cannot be named __metadata__");
    items.push_back(header_entry(file, name, tensor, offset));
    if (!names.insert(name).second) refuse(file, "tensor '" + name + "' is given twice");
  }
  std::string text = "{" + join_names(items, ",") + "}";
  text.resize((text.size() + 7) / 8 * 8, ' ');
  if (text.size() > max_header_bytes)
    refuse(file, "the header would be " + std::to_string(text.size()) +
                     " bytes, over safetensors' limit of " + std::to_string(max_header_bytes));
  return text;
}

// The tensor's bytes as the file stores them: on the CPU, contiguous, conjugation and
// negation views resolved (contiguous() keeps those as flags).
HOOKFORGE_INLINE torch::Tensor stored_form(const std::filesystem::path& file,
                                           const std::string& name, const torch::Tensor& t) {
  try {
    return t.detach().to(torch::kCPU).resolve_conj().resolve_neg().contiguous();
  } catch (const c10::Error& e) {
    fail(file, "tensor '" + name + "' cannot be copied to the CPU: " + e.what_without_backtrace());
  }
}

HOOKFORGE_INLINE void write(const std::filesystem::path& file, const named_tensors& tensors,
                            const std::map<std::string, std::string>& metadata) {
  check_little_endian(file);
  const std::string header = header_text(file, tensors, metadata);
  atomic_file out(file);
  const auto length = store_le64(header.size());
  out.write(length.data(), length.size());
  out.write(header.data(), header.size());
  for (const auto& [name, tensor] : tensors) {
    const torch::Tensor data = stored_form(file, name, tensor);
    const auto bytes = static_cast<std::size_t>(data.numel()) * data.element_size();
    if (bytes > 0) out.write(data.data_ptr(), bytes);
  }
  out.commit();
}

}  // namespace hookforge::detail::safetensors
