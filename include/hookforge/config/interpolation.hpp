// hookforge/config/interpolation.hpp — the `${...}` forms inside a config's strings.
//
//   ${a.b}       the value at a.b: as the whole value it keeps its type (a number, a
//                mapping ...); inside other text its scalar text is substituted
//                (`out: ${system.work_dir}/ckpt`)
//   ${ref:a.b}   the object built from the entry at a.b, built once and shared by every
//                reference (SR-Forge's object reference); only as the whole value
//   $${          a literal "${"
//
// Paths are dotted keys from the top of the document; a list item is its index
// (`hooks.0`). This header only splits a string into those pieces; document.hpp
// resolves them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hookforge::config {

struct interpolation_piece {
  enum kind_t { text, value, ref } kind = text;
  std::string content;     ///< the text, or the path
  std::size_t offset = 0;  ///< where the piece starts in the string
};

struct interpolation_error {
  std::size_t offset;
  std::string expected;
  std::string got;
};

struct interpolation {
  std::vector<interpolation_piece> pieces;
  std::optional<interpolation_error> error;

  bool has_references() const {
    for (const auto& p : pieces)
      if (p.kind != interpolation_piece::text) return true;
    return false;
  }
  /// The string is exactly one `${...}` (its type is kept, or it is an object reference).
  const interpolation_piece* whole() const {
    if (pieces.size() == 1 && pieces[0].kind != interpolation_piece::text) return &pieces[0];
    return nullptr;
  }
};

namespace detail {

inline bool is_path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

/// Empty when `path` is a valid dotted path, else what is wrong with it.
inline std::string path_problem(std::string_view path) {
  if (path.empty()) return "an empty path";
  std::size_t segment = 0;
  for (char c : path) {
    if (c == '.') {
      if (segment == 0) return "an empty key";
      segment = 0;
    } else if (!is_path_char(c)) {
      return std::string("the character '") + c + "'";
    } else {
      ++segment;
    }
  }
  if (segment == 0) return "an empty key";
  return {};
}

}  // namespace detail

/// Split `text` into literal text, `${path}` and `${ref:path}` pieces.
inline interpolation parse_interpolation(std::string_view text) {
  interpolation out;
  std::string literal;
  std::size_t literal_start = 0;
  auto flush = [&](std::size_t next) {
    if (!literal.empty()) out.pieces.push_back({interpolation_piece::text, literal, literal_start});
    literal.clear();
    literal_start = next;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      literal += text[i++];
      continue;
    }
    auto close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      out.error = interpolation_error{i, "'}' closing '${'", "the end of the text"};
      return out;
    }
    auto inner = text.substr(i + 2, close - i - 2);
    interpolation_piece piece{interpolation_piece::value, {}, i};
    if (inner.starts_with("ref:")) {
      piece.kind = interpolation_piece::ref;
      inner.remove_prefix(4);
    }
    auto problem = detail::path_problem(inner);
    if (!problem.empty()) {
      out.error =
          interpolation_error{i,
                              piece.kind == interpolation_piece::ref ? "a dotted path in ${ref:...}"
                                                                     : "a dotted path in ${...}",
                              problem + " in '" + std::string(text.substr(i, close - i + 1)) + "'"};
      return out;
    }
    flush(i);
    piece.content = std::string(inner);
    out.pieces.push_back(std::move(piece));
    i = close + 1;
    literal_start = i;
  }
  flush(i);
  return out;
}

}  // namespace hookforge::config
