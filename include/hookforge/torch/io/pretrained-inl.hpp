// hookforge/torch/io/pretrained-inl.hpp — load_pretrained's definitions: included by
// pretrained.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
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
#include "hookforge/torch/io/checkpoint_section.hpp"
#include "hookforge/torch/io/pretrained.hpp"

namespace hookforge {

namespace detail::pretrained {

using named_tensors = std::vector<std::pair<std::string, torch::Tensor>>;

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

  std::map<std::string, torch::Tensor> from;  // under the prefix, without it
  for (auto& [name, tensor] : stored)
    if (name.starts_with(options.prefix)) from.emplace(name.substr(options.prefix.size()), tensor);

  pretrained_report report;
  report.file = options.file;
  report.source = source;
  std::vector<std::string> misshaped;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (into, from)
  auto match = [&](const torch::OrderedDict<std::string, torch::Tensor>& tensors) {
    for (const auto& item : tensors) {
      if (!item.value().defined()) continue;
      const auto found = from.find(item.key());
      if (found == from.end()) {
        report.missing.push_back(item.key());
        continue;
      }
      if (found->second.sizes() != item.value().sizes())
        misshaped.push_back(item.key() + " (model " + shape_string(item.value().sizes()) +
                            ", file " + shape_string(found->second.sizes()) + ")");
      else
        copies.emplace_back(item.value(), found->second);
      report.loaded.push_back(item.key());
      from.erase(found);
    }
  };
  match(module.named_parameters(/*recurse=*/true));
  match(module.named_buffers(/*recurse=*/true));
  for (const auto& [name, tensor] : from) report.unexpected.push_back(options.prefix + name);

  std::vector<std::string> problems;
  if (!misshaped.empty()) problems.push_back("mis-shaped: " + join_names(misshaped, ", "));
  if (options.strict && !report.missing.empty())
    problems.push_back("missing from the file: " + join_names(report.missing, ", "));
  if (options.strict && !report.unexpected.empty())
    problems.push_back("not in the model: " + join_names(report.unexpected, ", "));
  if (report.loaded.empty() && problems.empty())
    problems.push_back("no tensor of the file" +
                       (options.prefix.empty() ? std::string() : " under the prefix") +
                       " matches the model's names");
  if (!problems.empty())
    throw std::invalid_argument("load_pretrained: '" + options.file.string() + "' (" + source +
                                ") does not fit the model" + (options.strict ? " (strict)" : "") +
                                ":\n  " + join_names(problems, "\n  "));
  if (apply) {
    torch::NoGradGuard no_grad;
    for (auto& [into, value] : copies) into.copy_(value);
  }
  return report;
}

}  // namespace hookforge
