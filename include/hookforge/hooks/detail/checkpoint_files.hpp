// hookforge/hooks/detail/checkpoint_files.hpp — CheckpointSaver's file names and files: the
// name templates, the best files of a score, the published copies.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <stdexcept>
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

/// What a best checkpoint's name says (best_filename_tmpl's fields).
struct best_name_fields {
  std::string metric;  ///< {metric}: the score's name as a file-name part
  double score;        ///< {score}, with a format spec if it likes: {score:.4f}
  std::int64_t epoch;  ///< {epoch}: epochs done, counting from 1 as the epoch files do
  std::int64_t step;   ///< {step}: training steps done
};

/// The best checkpoints' name template when best_filename_tmpl is empty: "best_{metric}_"
/// and the epoch files' template numbered by {epoch} (by step: {step}), as MMEngine names them.
inline std::string default_best_template(const std::string& file_tmpl, bool by_epoch) {
  const auto open = file_tmpl.find('{');
  return "best_{metric}_" + file_tmpl.substr(0, open + 1) + (by_epoch ? "epoch" : "step") +
         file_tmpl.substr(open + 1);
}

inline std::string best_name(const std::string& tmpl, const best_name_fields& f) {
  return fmt::format(fmt::runtime(tmpl), fmt::arg("metric", file_part(f.metric)),
                     fmt::arg("score", f.score), fmt::arg("epoch", f.epoch),
                     fmt::arg("step", f.step));
}

/// Throws unless `tmpl` names a file with the fields above, numbered by {epoch} or {step}
/// (two checkpoints never share a name).
inline void check_best_template(const std::string& tmpl) {
  std::string one, two;
  try {
    one = best_name(tmpl, {"psnr", 30.5, 1, 10});
    two = best_name(tmpl, {"psnr", 30.5, 2, 20});
  } catch (const fmt::format_error&) {
    one = two;
  }
  if (one == two || !is_file_name(one))
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: best_filename_tmpl must be a file name numbered by {{epoch}} or "
        "{{step}}, with {{metric}} and {{score}} if it likes (\"best_{{metric}}_{{score:.4f}}_"
        "epoch_{{epoch}}.pt\"), got \"{}\"",
        tmpl));
}

namespace name_match {
/// A piece of a name template: literal text, or a field and what it holds.
struct piece {
  enum kind_t { text, metric, digits, number } kind;
  std::string literal;
};

inline std::vector<piece> pieces(std::string_view tmpl) {
  std::vector<piece> out;
  const auto literal = [&](char c) {
    if (out.empty() || out.back().kind != piece::text) out.push_back({piece::text, ""});
    out.back().literal += c;
  };
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      literal(c);
      ++i;
    } else if (c == '{') {
      const auto close = tmpl.find('}', i);
      const auto field = tmpl.substr(i + 1, std::min(close, tmpl.find(':', i)) - i - 1);
      out.push_back({field == "metric"  ? piece::metric
                     : field == "score" ? piece::number
                                        : piece::digits,
                     ""});
      i = close == std::string_view::npos ? tmpl.size() : close;
    } else {
      literal(c);
    }
  }
  return out;
}

inline bool holds(piece::kind_t kind, char c) {
  if (std::isdigit(static_cast<unsigned char>(c))) return true;
  return kind == piece::number && std::string_view("+-.eEinfa").find(c) != std::string_view::npos;
}

inline bool match(const std::vector<piece>& ps, std::size_t p, std::string_view name,
                  const std::string& metric) {
  if (p == ps.size()) return name.empty();
  const piece& x = ps[p];
  if (x.kind == piece::text || x.kind == piece::metric) {
    const std::string& text = x.kind == piece::text ? x.literal : metric;
    return name.starts_with(text) && match(ps, p + 1, name.substr(text.size()), metric);
  }
  for (std::size_t n = 1; n <= name.size() && holds(x.kind, name[n - 1]); ++n)
    if (match(ps, p + 1, name.substr(n), metric)) return true;
  return false;
}
}  // namespace name_match

/// The best checkpoints of `metric` in `dir` (files whose names `tmpl` could give) other
/// than those in `keep`.
inline std::vector<std::filesystem::path> other_best_files(const std::filesystem::path& dir,
                                                           const std::string& tmpl,
                                                           const std::string& metric,
                                                           const std::vector<std::string>& keep) {
  const auto ps = name_match::pieces(tmpl);
  const std::string part = file_part(metric);
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = item.path().filename().string();
    if (std::find(keep.begin(), keep.end(), name) == keep.end() &&
        name_match::match(ps, 0, name, part))
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
