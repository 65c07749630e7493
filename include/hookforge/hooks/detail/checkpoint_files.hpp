// hookforge/hooks/detail/checkpoint_files.hpp — CheckpointSaver's file names and files: the
// name template, the best files of a score, the published copies.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hookforge/hooks/detail/file_name.hpp"
#include "hookforge/hooks/detail/sha256.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"

namespace hookforge::detail::saver {

/// The text around the template's one replacement field: ("epoch_", ".pt").
inline std::pair<std::string, std::string> template_parts(const std::string& tmpl) {
  const auto open = tmpl.find('{'), close = tmpl.find('}');
  return {tmpl.substr(0, open), tmpl.substr(close + 1)};
}

/// A score's name as a file-name part: characters other than letters, digits, '-', '_'
/// and '.' become '_' (MMEngine replaces '/').
inline std::string file_part(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return out;
}

/// Throws unless `tmpl` is a file name with one {} that numbers it ("epoch_{}.pt").
inline void check_template(const std::string& tmpl) {
  const bool one_field = std::count(tmpl.begin(), tmpl.end(), '{') == 1 &&
                         std::count(tmpl.begin(), tmpl.end(), '}') == 1 &&
                         tmpl.find('{') < tmpl.find('}');
  std::string one, two;
  if (one_field) {
    try {
      one = fmt::format(fmt::runtime(tmpl), 1);
      two = fmt::format(fmt::runtime(tmpl), 2);
    } catch (const fmt::format_error&) {
      one = two;
    }
  }
  if (!one_field || one == two || !is_file_name(one))
    throw std::invalid_argument(
        fmt::format("CheckpointSaver: filename_tmpl must be a file name with one {{}} for the "
                    "epoch (\"epoch_{{}}.pt\"), "
                    "got \"{}\"",
                    tmpl));
}

/// The best checkpoints of `metric` in `dir` (best_<metric>_<template of a number>) other
/// than `keep`.
inline std::vector<std::filesystem::path> other_best_files(const std::filesystem::path& dir,
                                                           const std::string& tmpl,
                                                           const std::string& metric,
                                                           const std::string& keep) {
  const auto [head, tail] = template_parts(tmpl);
  const std::string prefix = "best_" + file_part(metric) + "_" + head;
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = item.path().filename().string();
    if (name == keep || name.size() <= prefix.size() + tail.size() || !name.starts_with(prefix) ||
        !name.ends_with(tail))
      continue;
    const auto middle =
        std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - tail.size());
    if (std::all_of(middle.begin(), middle.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      out.push_back(item.path());
  }
  return out;
}

/// `source` with only the `sections`, as `<stem>-<sha256[:8]><ext>` beside it.
inline std::filesystem::path publish_file(const std::filesystem::path& source,
                                          const std::vector<std::string>& sections) {
  const auto dir = source.parent_path();
  const std::string stem = source.stem().string(), ext = source.extension().string();
  const auto staging = dir / (stem + ".publishing" + ext);
  copy_checkpoint_sections(source, staging, sections);
  const auto target = dir / fmt::format("{}-{}{}", stem, sha256_file(staging).substr(0, 8), ext);
  rename_over(staging, target);
  fsync_directory(directory_of(target));
  return target;
}

}  // namespace hookforge::detail::saver
