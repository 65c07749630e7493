// hookforge/torch/weights/weights_file-inl.hpp — read_weights and write_weights: included by
// weights_file.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/serialize/input-archive.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/io/checkpoint_format.hpp"
#include "hookforge/torch/weights/pth.hpp"
#include "hookforge/torch/weights/safetensors.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

namespace hookforge {

namespace detail::weights {

// The tensors of a module archive (torch::save(module)): each child module is an archive
// of its own, flattened into dotted names.
HOOKFORGE_INLINE void flatten(torch::serialize::InputArchive& archive, const std::string& prefix,
                              named_tensors& out) {
  for (const auto& key : archive.keys()) {
    c10::IValue value;
    if (archive.try_read(key, value) && value.isTensor()) {
      out.emplace_back(prefix + key, value.toTensor());
      continue;
    }
    torch::serialize::InputArchive child;
    if (archive.try_read(key, child)) flatten(child, prefix + key + ".", out);
  }
}

// A zip that LibTorch wrote: a hookforge checkpoint of version 1 or a torch::save archive.
HOOKFORGE_INLINE weights_file read_torchscript(const std::filesystem::path& file,
                                               const weights_read_options& options) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(file.string());
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw checkpoint_error(
        "'" + file.string() +
        "' is a TorchScript archive LibTorch cannot read: " + what.substr(0, what.find('\n')));
  }
  weights_file out;
  out.file = file;
  c10::IValue format;
  if (archive.try_read(std::string(ckpt::format_name),
                       format)) {  // a hookforge checkpoint, version 1
    checkpoint_reader reader(file, torch::kCPU);
    out.kind = "hookforge checkpoint";
    out.entry = options.section;
    out.tensors = reader.module_tensors(options.section);
    return out;
  }
  out.kind = "torch::save archive";
  flatten(archive, "", out.tensors);
  return out;
}

// A zip of LibTorch's TorchScript layout (constants.pkl beside data.pkl), not torch.save's.
HOOKFORGE_INLINE bool is_torchscript(const std::filesystem::path& file) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    return reader.hasRecord("constants.pkl");  // torch.save never writes one
  } catch (const c10::Error&) {
    return false;  // pth::read names what is wrong with it
  }
}

}  // namespace detail::weights

HOOKFORGE_INLINE std::optional<weights_format> parse_weights_format(std::string_view name) {
  if (name == "safetensors") return weights_format::safetensors;
  if (name == "pth") return weights_format::pth;
  return std::nullopt;
}

HOOKFORGE_INLINE std::string_view weights_suffix(weights_format format) {
  return format == weights_format::safetensors ? ".safetensors" : ".pth";
}

HOOKFORGE_INLINE std::string weights_file::describe() const {
  std::string text = kind;
  if (!entry.empty())
    text += (kind == "hookforge checkpoint" ? ", section '" : ", entry '") + entry + "'";
  if (!other_entries.empty())
    text += " (also holding tensors: '" + join_names(other_entries, "', '") + "')";
  return text;
}

HOOKFORGE_INLINE weights_file read_weights(const std::filesystem::path& file,
                                           const weights_read_options& options) {
  std::array<char, 16> head{};
  std::streamsize got = 0;
  {
    std::ifstream in(file, std::ios::binary);
    if (!in || std::filesystem::is_directory(file))
      throw checkpoint_error("'" + file.string() +
                             "' cannot be opened (no such file, or not readable)");
    in.read(head.data(), head.size());
    got = in.gcount();
  }
  const std::string_view start(head.data(), static_cast<std::size_t>(got));
  const auto size = std::filesystem::file_size(file);
  if (start == detail::ckpt::magic) {
    checkpoint_reader reader(file, torch::kCPU);
    weights_file out{.file = file, .kind = "hookforge checkpoint", .entry = options.section};
    out.tensors = reader.module_tensors(options.section);
    return out;
  }
  if (start.starts_with(detail::pth::zip_signature)) {
    if (detail::weights::is_torchscript(file))
      return detail::weights::read_torchscript(file, options);
    auto contents = detail::pth::read(file, options.key, options.opaque_globals);
    weights_file out{.file = file, .kind = "PyTorch archive (torch.save)"};
    out.entry = std::move(contents.entry);
    out.other_entries = std::move(contents.other_entries);
    out.tensors = std::move(contents.tensors);
    return out;
  }
  // A file named .safetensors that does not look like one gets the safetensors reader's
  // own account of what is wrong with it.
  if (detail::safetensors::looks_like(reinterpret_cast<const unsigned char*>(head.data()),
                                      static_cast<std::size_t>(got), size) ||
      file.extension() == ".safetensors") {
    auto contents = detail::safetensors::read(file);
    return {.file = file,
            .kind = "safetensors",
            .tensors = std::move(contents.tensors),
            .metadata = std::move(contents.metadata)};
  }
  if (detail::pth::looks_legacy(start))
    throw checkpoint_error("'" + file.string() +
                           "' is in torch.save's format before PyTorch 1.6 (or "
                           "_use_new_zipfile_serialization=False), which hookforge does not "
                           "read: load it in Python and torch.save it again");
  throw checkpoint_error("'" + file.string() +
                         "' is none of the weights files hookforge reads (a torch.save archive, "
                         "safetensors, a hookforge checkpoint, a torch::save archive)");
}

HOOKFORGE_INLINE void write_weights(const std::filesystem::path& file, const named_tensors& tensors,
                                    weights_format format,
                                    const std::map<std::string, std::string>& metadata) {
  if (format == weights_format::safetensors)
    detail::safetensors::write(file, tensors, metadata);
  else
    detail::pth::write(file, tensors);
}

HOOKFORGE_INLINE void save_weights(const torch::nn::Module& module,
                                   const std::filesystem::path& file, weights_format format) {
  write_weights(file, state_dict(module), format);
}

}  // namespace hookforge
