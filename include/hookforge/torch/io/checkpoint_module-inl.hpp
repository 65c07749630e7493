// hookforge/torch/io/checkpoint_module-inl.hpp — the "module" section kind's definitions:
// included by checkpoint_module.hpp header-only, compiled into hookforge::torch_compiled
// otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>
#include <torch/ordered_dict.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/checkpoint_module.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE void encode_module(torch::serialize::OutputArchive& section,
                                    const torch::nn::Module& module) {
  const auto cu = section.compilation_unit();
  torch::serialize::OutputArchive parameters(cu), buffers(cu);
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    if (p.value().defined()) parameters.write(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true))
    if (b.value().defined()) buffers.write(b.key(), b.value(), /*is_buffer=*/true);
  section.write("parameters", parameters);
  section.write("buffers", buffers);
}

HOOKFORGE_INLINE tensor_match match_tensors(
    const torch::OrderedDict<std::string, torch::Tensor>& expected, const named_tensors& stored) {
  tensor_match match;
  std::vector<bool> used(stored.size(), false);
  for (const auto& item : expected) {
    const torch::Tensor& into = item.value();
    if (!into.defined()) continue;
    const auto found = std::find_if(stored.begin(), stored.end(),
                                    [&](const auto& s) { return s.first == item.key(); });
    if (found == stored.end()) {
      match.missing.emplace_back(item.key(), into);
      continue;
    }
    used[static_cast<std::size_t>(found - stored.begin())] = true;
    if (found->second.sizes() != into.sizes())
      match.misshaped.emplace_back(item.key(), into, found->second);
    else
      match.copies.emplace_back(into, found->second);
  }
  for (std::size_t i = 0; i < stored.size(); ++i)
    if (!used[i]) match.unexpected.push_back(stored[i]);
  return match;
}

// The tensors of `archive`'s sub-archive `key`, by name.
HOOKFORGE_INLINE named_tensors archive_tensors(torch::serialize::InputArchive& archive,
                                               const std::string& key) {
  torch::serialize::InputArchive stored;
  archive.read(key, stored);
  named_tensors out;
  for (const auto& name : stored.keys()) {
    c10::IValue value;
    if (stored.try_read(name, value) && value.isTensor()) out.emplace_back(name, value.toTensor());
  }
  return out;
}

HOOKFORGE_INLINE void decode_module(const stored_section& section, torch::nn::Module& module) {
  std::vector<std::string> problems;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (into, from)
  auto check = [&](const char* key, const std::string& what,
                   const torch::OrderedDict<std::string, torch::Tensor>& expected) {
    auto match = match_tensors(expected, archive_tensors(section.archive, key));
    for (const auto& [name, into] : match.missing)
      problems.push_back(what + " '" + name + "' (shape " + shape_string(into.sizes()) +
                         ") is missing from the checkpoint");
    for (const auto& [name, into, from] : match.misshaped)
      problems.push_back(what + " '" + name + "': the module expects shape " +
                         shape_string(into.sizes()) + ", the checkpoint has " +
                         shape_string(from.sizes()));
    for (const auto& [name, from] : match.unexpected)
      problems.push_back("the checkpoint has " + what + " '" + name + "' (shape " +
                         shape_string(from.sizes()) + ") that the module lacks");
    copies.insert(copies.end(), match.copies.begin(), match.copies.end());
  };
  check("parameters", "parameter", module.named_parameters(true));
  check("buffers", "buffer", module.named_buffers(true));
  if (!problems.empty())
    section.fail("section '" + section.name + "' does not match the module " + module.name() +
                 ":\n  " + hookforge::join_names(problems, "\n  "));
  torch::NoGradGuard no_grad;
  for (auto& [into, from] : copies) into.copy_(from);
}

HOOKFORGE_INLINE named_tensors module_tensors(const stored_section& section) {
  auto out = archive_tensors(section.archive, "parameters");
  auto buffers = archive_tensors(section.archive, "buffers");
  out.insert(out.end(), buffers.begin(), buffers.end());
  return out;
}

}  // namespace hookforge::detail::ckpt
