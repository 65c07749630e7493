// hookforge/torch/io/checkpoint_optimizer-inl.hpp — the "optimizer" section kind's
// definitions: included by checkpoint_optimizer.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <c10/util/Type.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/checkpoint_optimizer.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE std::string type_name(const torch::optim::Optimizer& optimizer) {
  return c10::demangle(typeid(optimizer).name());
}

// Options through their virtual serialize() (every built-in optimizer's options
// implement it: all of lr, momentum, betas, eps, weight_decay, ...), plus get_lr() on
// its own so custom options that only implement get_lr/set_lr keep their lr.
HOOKFORGE_INLINE void write_options(torch::serialize::OutputArchive& into, const std::string& key,
                                    const torch::optim::OptimizerOptions& options) {
  torch::serialize::OutputArchive fields(into.compilation_unit());
  bool serialized = true;
  try {
    options.serialize(fields);
  } catch (const c10::Error&) {
    serialized = false;  // custom options without serialize()
  }
  if (serialized) into.write(key, fields);
  try {
    into.write(key + ".lr", c10::IValue(options.get_lr()));
  } catch (const c10::Error&) {
    // custom options without get_lr()
  }
}

HOOKFORGE_INLINE void read_options(torch::serialize::InputArchive& from, const std::string& key,
                                   torch::optim::OptimizerOptions& options) {
  torch::serialize::InputArchive fields;
  if (from.try_read(key, fields)) options.serialize(fields);
  c10::IValue lr;
  if (from.try_read(key + ".lr", lr)) options.set_lr(lr.toDouble());
}

HOOKFORGE_INLINE void encode_optimizer(torch::serialize::OutputArchive& section,
                                       const torch::optim::Optimizer& optimizer) {
  const auto cu = section.compilation_unit();
  section.write("type", c10::IValue(type_name(optimizer)));

  torch::serialize::OutputArchive torch_state(cu);
  optimizer.save(torch_state);
  section.write("torch", torch_state);

  torch::serialize::OutputArchive groups(cu);
  const auto& param_groups = optimizer.param_groups();
  groups.write("count", c10::IValue(static_cast<std::int64_t>(param_groups.size())));
  for (std::size_t i = 0; i < param_groups.size(); ++i) {
    torch::serialize::OutputArchive group(cu), shapes(cu);
    const auto& params = param_groups[i].params();
    group.write("size", c10::IValue(static_cast<std::int64_t>(params.size())));
    for (std::size_t j = 0; j < params.size(); ++j)
      shapes.write(std::to_string(j), c10::IValue(params[j].sizes().vec()));
    group.write("shapes", shapes);
    if (param_groups[i].has_options()) write_options(group, "options", param_groups[i].options());
    groups.write(std::to_string(i), group);
  }
  section.write("groups", groups);
  write_options(section, "defaults", optimizer.defaults());
}

HOOKFORGE_INLINE std::vector<torch::serialize::InputArchive> matching_groups(
    const stored_section& section, const torch::optim::Optimizer& optimizer) {
  const std::string& name = section.name;
  const std::string have = type_name(optimizer);
  const std::string saved = section.read("type").toStringRef();
  if (have != saved)
    section.fail("section '" + name + "' holds the state of a " + saved +
                 ", cannot load it into a " + have);

  torch::serialize::InputArchive groups;
  section.archive.read("groups", groups);
  const auto& param_groups = optimizer.param_groups();
  const auto count = read_value(groups, "count").toInt();
  if (count != static_cast<std::int64_t>(param_groups.size()))
    section.fail("section '" + name + "' has " + std::to_string(count) +
                 " parameter group(s), the optimizer has " + std::to_string(param_groups.size()));

  std::vector<torch::serialize::InputArchive> group_archives(param_groups.size());
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < param_groups.size(); ++i) {
    groups.read(std::to_string(i), group_archives[i]);
    const auto& params = param_groups[i].params();
    const auto size = read_value(group_archives[i], "size").toInt();
    if (size != static_cast<std::int64_t>(params.size())) {
      problems.push_back("parameter group " + std::to_string(i) + " has " + std::to_string(size) +
                         " parameter(s) in the checkpoint, " + std::to_string(params.size()) +
                         " in the optimizer");
      continue;
    }
    torch::serialize::InputArchive shapes;
    group_archives[i].read("shapes", shapes);
    for (std::size_t j = 0; j < params.size(); ++j) {
      const auto found = read_value(shapes, std::to_string(j)).toIntVector();
      if (found != params[j].sizes().vec())
        problems.push_back("parameter group " + std::to_string(i) + ", parameter " +
                           std::to_string(j) + ": the optimizer expects shape " +
                           shape_string(params[j].sizes()) + ", the checkpoint has " +
                           shape_string(found));
    }
  }
  if (!problems.empty())
    section.fail("section '" + name + "' does not match the optimizer " + have + ":\n  " +
                 hookforge::join_names(problems, "\n  "));
  return group_archives;
}

HOOKFORGE_INLINE void decode_optimizer(const stored_section& section,
                                       torch::optim::Optimizer& optimizer) {
  auto group_archives = matching_groups(section, optimizer);
  auto& param_groups = optimizer.param_groups();
  torch::serialize::InputArchive torch_state;
  section.archive.read("torch", torch_state);
  optimizer.state().clear();  // state of parameters that had none when saved must go
  optimizer.load(torch_state);
  for (std::size_t i = 0; i < param_groups.size(); ++i)
    if (param_groups[i].has_options())
      read_options(group_archives[i], "options", param_groups[i].options());
  read_options(section.archive, "defaults", optimizer.defaults());
}

}  // namespace hookforge::detail::ckpt
