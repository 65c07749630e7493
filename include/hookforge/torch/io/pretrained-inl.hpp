// hookforge/torch/io/pretrained-inl.hpp — load_pretrained's definitions: included by
// pretrained.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/utils.h>

#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/checkpoint_module.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"
#include "hookforge/torch/io/pretrained.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

namespace hookforge {

namespace detail::pretrained {

// The file's names through strip_prefix and rename (see pretrained.hpp), each change
// recorded in `renamed`.
HOOKFORGE_INLINE void map_names(named_tensors& tensors, const pretrained_options& options,
                                std::vector<std::pair<std::string, std::string>>& renamed) {
  std::vector<std::pair<std::regex, std::string>> rules;
  for (const auto& [pattern, replacement] : options.rename) {
    try {
      rules.emplace_back(std::regex(pattern, std::regex::ECMAScript), replacement);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("load_pretrained: rename '" + pattern +
                                  "' is not a regular expression: " + e.what());
    }
  }
  for (auto& [name, tensor] : tensors) {
    std::string mapped = name;
    for (const auto& strip : options.strip_prefix)
      if (!strip.empty() && mapped.starts_with(strip)) mapped.erase(0, strip.size());
    for (const auto& [rule, replacement] : rules)
      mapped = std::regex_replace(mapped, rule, replacement);
    if (mapped != name) renamed.emplace_back(name, mapped);
    name = std::move(mapped);
  }
}

// "a (closest in the file: b, c)" for each name: the names of `others` that end with it or
// that it ends with, at a dot (a prefix too many or too few: "module.net.0.weight"), else
// those at the least edit distance when it is small.
HOOKFORGE_INLINE std::vector<std::string> with_closest(const std::vector<std::string>& names,
                                                       const std::vector<std::string>& others,
                                                       std::string_view where) {
  std::vector<std::string_view> candidates(others.begin(), others.end());
  std::vector<std::string> out;
  for (const auto& name : names) {
    std::vector<std::string> closest;
    for (const auto& other : others)
      if (other.ends_with("." + name) || name.ends_with("." + other)) closest.push_back(other);
    if (closest.empty()) {
      const auto [nearest, distance] = closest_names(name, candidates);
      if (distance <= std::max<std::size_t>(name.size() / 3, 2))
        closest.assign(nearest.begin(), nearest.end());
    }
    std::string line = name;
    if (!closest.empty()) {
      closest.resize(std::min<std::size_t>(closest.size(), 3));
      line += " (closest in the " + std::string(where) + ": " + join_names(closest, ", ") + ")";
    }
    out.push_back(std::move(line));
  }
  return out;
}

// The summary's note on renamed names: all of them when few, else a count and the first.
HOOKFORGE_INLINE std::string renamed_note(
    const std::vector<std::pair<std::string, std::string>>& renamed) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < std::min<std::size_t>(renamed.size(), 3); ++i)
    shown.push_back(renamed[i].first + " -> " + renamed[i].second);
  return "; renamed " + std::to_string(renamed.size()) + ": " + join_names(shown, ", ") +
         (renamed.size() > shown.size() ? ", ..." : "");
}

}  // namespace detail::pretrained

HOOKFORGE_INLINE std::string pretrained_report::summary() const {
  std::string text = "loaded " + std::to_string(loaded.size()) + " of " +
                     std::to_string(loaded.size() + missing.size()) + " tensors from '" +
                     file.string() + "' (" + source + ")";
  if (!renamed.empty()) text += detail::pretrained::renamed_note(renamed);
  if (!missing.empty()) text += "; not in the file: " + join_names(missing, ", ");
  if (!unexpected.empty()) text += "; not in the model: " + join_names(unexpected, ", ");
  return text;
}

HOOKFORGE_INLINE pretrained_report load_pretrained(torch::nn::Module& module,
                                                   const pretrained_options& options, bool apply) {
  using detail::ckpt::shape_string;
  if (options.file.empty()) throw std::invalid_argument("load_pretrained: file must be given");
  auto weights = read_weights(
      options.file,
      {.key = options.key, .section = options.section, .opaque_globals = options.opaque_globals});
  pretrained_report report;
  report.file = options.file;
  report.source = weights.describe();
  if (!options.prefix.empty()) report.source += ", prefix '" + options.prefix + "'";
  detail::pretrained::map_names(weights.tensors, options, report.renamed);

  named_tensors under;  // under the prefix, without it
  for (auto& [name, tensor] : weights.tensors)
    if (name.starts_with(options.prefix))
      under.emplace_back(name.substr(options.prefix.size()), tensor);
  auto expected = module.named_parameters(/*recurse=*/true);
  for (const auto& buffer : module.named_buffers(/*recurse=*/true))
    expected.insert(buffer.key(), buffer.value());
  const auto match = detail::ckpt::match_tensors(expected, under);

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
    problems.push_back(
        "missing from the file: " +
        join_names(detail::pretrained::with_closest(report.missing, report.unexpected, "file"),
                   ", "));
  if (options.strict && !report.unexpected.empty())
    problems.push_back(
        "not in the model: " +
        join_names(detail::pretrained::with_closest(report.unexpected, report.missing, "model"),
                   ", "));
  if (match.copies.empty() && problems.empty())
    problems.push_back("no tensor of the file" +
                       (options.prefix.empty() ? std::string() : " under the prefix") +
                       " matches the model's names");
  if (!problems.empty())
    throw std::invalid_argument("load_pretrained: '" + options.file.string() + "' (" +
                                report.source + ") does not fit the model" +
                                (options.strict ? " (strict)" : "") + ":\n  " +
                                join_names(problems, "\n  "));
  if (apply) {
    torch::NoGradGuard no_grad;
    for (const auto& [into, value] : match.copies) into.copy_(value);
  }
  return report;
}

}  // namespace hookforge
