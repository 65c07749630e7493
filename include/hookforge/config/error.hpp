// hookforge/config/error.hpp — the one exception a config mistake raises.
//
// Every mistake in a config — unreadable file, invalid YAML, unknown `_target`, wrong
// parameter type, dangling `${ref}`, bad priority ... — is a `config_error` that knows
// where (file, line, column, key path) and what was expected:
//
//   configs/run.yaml:12:18: trainer.params.epochs: expected an integer, got 'ten'
//   configs/run.yaml:7:15: hooks.clip._target: expected a registered hook, got 'GradClip' (closest:
//   GradientClip)
//
// Lines and columns count from 1. The key path is dotted, with [i] for list items
// (`training_runner.params.hooks[1].priority`); `<document>` is the whole file.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"

namespace hookforge::config {

/// A place in a config: a file (or `<--set a.b=v>` for a command-line override), 1-based.
struct location {
  std::string file;
  std::size_t line = 1;
  std::size_t column = 1;
};

class config_error : public std::runtime_error {
 public:
  /// `note`, when given, follows in parentheses ("closest: a, b").
  config_error(location where, std::string key, std::string expected, std::string got,
               std::string note = {})
      : std::runtime_error(format(where, key, expected, got, note)),
        where_(std::move(where)),
        key_(std::move(key)),
        expected_(std::move(expected)),
        got_(std::move(got)),
        note_(std::move(note)) {}

  const location& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& expected() const { return expected_; }
  const std::string& got() const { return got_; }
  const std::string& note() const { return note_; }

 private:
  static std::string format(const location& where, const std::string& key,
                            const std::string& expected, const std::string& got,
                            const std::string& note) {
    auto text = fmt::format("{}:{}:{}: {}: expected {}, got {}", where.file, where.line,
                            where.column, key.empty() ? "<document>" : key, expected, got);
    if (!note.empty()) text += fmt::format(" ({})", note);
    return text;
  }

  location where_;
  std::string key_, expected_, got_, note_;
};

namespace detail {

/// "closest: a, b" — the candidates nearest to `name` (see core/runtime/closest_names.hpp),
/// or "none is registered" / nothing when there are no candidates.
inline std::string closest_note(std::string_view name, std::span<const std::string_view> candidates,
                                std::string_view when_empty = {}) {
  if (candidates.empty()) return std::string(when_empty);
  return "closest: " +
         hookforge::join_names(hookforge::closest_names(name, candidates).first, ", ");
}

inline std::string closest_note(std::string_view name, const std::vector<std::string>& candidates,
                                std::string_view when_empty = {}) {
  std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return closest_note(name, std::span<const std::string_view>(views), when_empty);
}

/// "'text'", shortened past 60 characters: a value as an error message shows it.
inline std::string quote(std::string_view text, char mark = '\'') {
  constexpr std::size_t limit = 60;
  std::string out(1, mark);
  if (text.size() <= limit) {
    out.append(text);
  } else {
    out.append(text.substr(0, limit));
    out.append("...");
  }
  out.push_back(mark);
  // Control characters would garble the terminal; show them escaped.
  std::string clean;
  for (unsigned char c : out) {
    if (c < 0x20 || c == 0x7f)
      clean += fmt::format("\\x{:02x}", c);
    else
      clean.push_back(static_cast<char>(c));
  }
  return clean;
}

}  // namespace detail

}  // namespace hookforge::config
