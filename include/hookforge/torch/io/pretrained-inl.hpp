// hookforge/torch/io/pretrained-inl.hpp — load_pretrained's definitions: included by
// pretrained.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <algorithm>
#include <array>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/utils.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/io/checkpoint_format.hpp"
#include "hookforge/torch/io/checkpoint_module.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"
#include "hookforge/torch/io/pretrained.hpp"

namespace hookforge {

namespace detail::pretrained {

using ckpt::named_tensors;

/// The tensors of a module archive (torch::save(module)): each child module is an archive
/// of its own, flattened into dotted names.
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

/// The file's tensors by name, and where they came from.
HOOKFORGE_INLINE std::pair<named_tensors, std::string> read_tensors(
    const pretrained_options& options) {
  std::array<char, 16> head{};
  {
    std::ifstream in(options.file, std::ios::binary);
    if (!in)
      throw checkpoint_error("load_pretrained: '" + options.file.string() +
                             "' cannot be opened (no such file, or not readable)");
    in.read(head.data(), head.size());
  }
  const std::string_view start(head.data(), head.size());
  bool hookforge_file = start == ckpt::magic;
  torch::serialize::InputArchive archive;
  if (!hookforge_file) {
    try {
      archive.load_from(options.file.string());
    } catch (const c10::Error&) {
      throw checkpoint_error("load_pretrained: '" + options.file.string() +
                             "' is neither a hookforge checkpoint nor a torch::save archive");
    }
    c10::IValue format;
    hookforge_file = archive.try_read(std::string(ckpt::format_name), format);  // version 1
  }
  if (hookforge_file) {
    checkpoint_reader reader(options.file, torch::kCPU);
    return {reader.module_tensors(options.section),
            "hookforge checkpoint, section '" + options.section + "'"};
  }
  named_tensors out;
  flatten(archive, "", out);
  return {std::move(out), "torch::save archive"};
}

}  // namespace detail::pretrained

HOOKFORGE_INLINE std::string pretrained_report::summary() const {
  std::string text = "loaded " + std::to_string(loaded.size()) + " of " +
                     std::to_string(loaded.size() + missing.size()) + " tensors from '" +
                     file.string() + "' (" + source + ")";
  if (!missing.empty()) text += "; not in the file: " + join_names(missing, ", ");
  if (!unexpected.empty()) text += "; not in the model: " + join_names(unexpected, ", ");
  return text;
}

HOOKFORGE_INLINE pretrained_report load_pretrained(torch::nn::Module& module,
                                                   const pretrained_options& options, bool apply) {
  using detail::ckpt::shape_string;
  if (options.file.empty()) throw std::invalid_argument("load_pretrained: file must be given");
  auto [stored, source] = detail::pretrained::read_tensors(options);
  if (!options.prefix.empty()) source += ", prefix '" + options.prefix + "'";

  detail::ckpt::named_tensors under;  // under the prefix, without it
  for (auto& [name, tensor] : stored)
    if (name.starts_with(options.prefix))
      under.emplace_back(name.substr(options.prefix.size()), tensor);
  auto expected = module.named_parameters(/*recurse=*/true);
  for (const auto& buffer : module.named_buffers(/*recurse=*/true))
    expected.insert(buffer.key(), buffer.value());
  const auto match = detail::ckpt::match_tensors(expected, under);

  pretrained_report report;
  report.file = options.file;
  report.source = source;
  for (const auto& item : expected)
    if (item.value().defined()) report.loaded.push_back(item.key());
  for (const auto& [name, tensor] : match.missing) {
    report.missing.push_back(name);
    std::erase(report.loaded, name);
  }
  for (const auto& [name, tensor] : match.unexpected)
    report.unexpected.push_back(options.prefix + name);

  std::vector<std::string> problems, misshaped;
  for (const auto& [name, into, from] : match.misshaped)
    misshaped.push_back(name + " (model " + shape_string(into.sizes()) + ", file " +
                        shape_string(from.sizes()) + ")");
  if (!misshaped.empty()) problems.push_back("mis-shaped: " + join_names(misshaped, ", "));
  if (options.strict && !report.missing.empty())
    problems.push_back("missing from the file: " + join_names(report.missing, ", "));
  if (options.strict && !report.unexpected.empty())
    problems.push_back("not in the model: " + join_names(report.unexpected, ", "));
  if (match.copies.empty() && problems.empty())
    problems.push_back("no tensor of the file" +
                       (options.prefix.empty() ? std::string() : " under the prefix") +
                       " matches the model's names");
  if (!problems.empty())
    throw std::invalid_argument("load_pretrained: '" + options.file.string() + "' (" + source +
                                ") does not fit the model" + (options.strict ? " (strict)" : "") +
                                ":\n  " + join_names(problems, "\n  "));
  if (apply) {
    torch::NoGradGuard no_grad;
    for (const auto& [into, value] : match.copies) into.copy_(value);
  }
  return report;
}

}  // namespace hookforge
