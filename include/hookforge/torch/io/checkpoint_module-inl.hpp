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

// The tensors of `section`'s archive `key` against `expected`: each mismatch into
// `problems` ("parameter 'w': the module expects shape ..."), each match into `copies`.
HOOKFORGE_INLINE void match_tensors(torch::serialize::InputArchive& section, const std::string& key,
                                    const std::string& what,
                                    const torch::OrderedDict<std::string, torch::Tensor>& expected,
                                    std::vector<std::string>& problems,
                                    std::vector<std::pair<torch::Tensor, torch::Tensor>>& copies) {
  torch::serialize::InputArchive stored;
  section.read(key, stored);
  const auto stored_names = stored.keys();
  std::vector<std::string> wanted;
  for (const auto& item : expected) {
    const torch::Tensor& into = item.value();
    if (!into.defined()) continue;
    wanted.push_back(item.key());
    c10::IValue from;
    if (!stored.try_read(item.key(), from) || !from.isTensor()) {
      problems.push_back(what + " '" + item.key() + "' (shape " + shape_string(into.sizes()) +
                         ") is missing from the checkpoint");
    } else if (from.toTensor().sizes() != into.sizes()) {
      problems.push_back(what + " '" + item.key() + "': the module expects shape " +
                         shape_string(into.sizes()) + ", the checkpoint has " +
                         shape_string(from.toTensor().sizes()));
    } else {
      copies.emplace_back(into, from.toTensor());
    }
  }
  for (const auto& stored_name : stored_names) {
    if (std::find(wanted.begin(), wanted.end(), stored_name) != wanted.end()) continue;
    c10::IValue from;
    stored.try_read(stored_name, from);
    problems.push_back("the checkpoint has " + what + " '" + stored_name + "'" +
                       (from.isTensor() ? " (shape " + shape_string(from.toTensor().sizes()) + ")"
                                        : std::string()) +
                       " that the module lacks");
  }
}

HOOKFORGE_INLINE void decode_module(const stored_section& section, torch::nn::Module& module) {
  std::vector<std::string> problems;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (into, from)
  match_tensors(section.archive, "parameters", "parameter", module.named_parameters(true), problems,
                copies);
  match_tensors(section.archive, "buffers", "buffer", module.named_buffers(true), problems, copies);
  if (!problems.empty())
    section.fail("section '" + section.name + "' does not match the module " + module.name() +
                 ":\n  " + hookforge::join_names(problems, "\n  "));
  torch::NoGradGuard no_grad;
  for (auto& [into, from] : copies) into.copy_(from);
}

HOOKFORGE_INLINE std::vector<std::pair<std::string, torch::Tensor>> module_tensors(
    const stored_section& section) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const char* key : {"parameters", "buffers"}) {
    torch::serialize::InputArchive stored;
    section.archive.read(key, stored);
    for (const auto& name : stored.keys()) {
      c10::IValue value;
      if (stored.try_read(name, value) && value.isTensor())
        out.emplace_back(name, value.toTensor());
    }
  }
  return out;
}

}  // namespace hookforge::detail::ckpt
