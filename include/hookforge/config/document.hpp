// hookforge/config/document.hpp — a loaded config: YAML, where each value came from, `--set`
// overrides, and the `${...}` forms resolved.
//
//   auto doc = hookforge::config::document::load_file("run.yaml");
//   doc.set("trainer.params.epochs=3");  // --set: the value is parsed as YAML
//   doc.validate();  // limits, keys, every ${...} (the builder calls it)
//   hookforge::config::value v = doc.at("trainer.params.epochs");
//
// Loading never crashes on bad input: an unreadable file, invalid YAML (yaml-cpp's
// mark gives the line), binary data, a file over `limits::max_bytes`, nesting deeper
// than `limits::max_depth`, alias bombs (`limits::max_nodes` counts each visit),
// duplicate keys, and dangling or cyclic `${...}` are each a config_error naming the
// file, line, column and key path. Nor does resolving hang: each `${...}` is resolved
// once (the result is kept), and an expanded string longer than `limits::max_text`, or
// expansions above `limits::max_expanded` in all, are a config_error at the key.
//
// Its values are `value`s (value.hpp); `--set` is applied by detail/override.hpp, and the
// YAML read by detail/load_yaml.hpp, which works around yaml-cpp's failures.
#pragma once

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "hookforge/config/detail/dotted_path.hpp"
#include "hookforge/config/detail/load_yaml.hpp"
#include "hookforge/config/detail/override.hpp"
#include "hookforge/config/detail/source.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/interpolation.hpp"
#include "hookforge/config/value.hpp"

namespace hookforge::config {

/// Bounds on what a config may be; past them loading stops with a config_error.
struct limits {
  std::size_t max_bytes = std::size_t{4} << 20;  ///< file size
  std::size_t max_depth = 64;         ///< nesting, `${}` chains, objects built within objects
  std::size_t max_nodes = 1'000'000;  ///< nodes visited, counting each alias use
  std::size_t max_text = std::size_t{1} << 20;       ///< one string with its `${...}` expanded
  std::size_t max_expanded = std::size_t{16} << 20;  ///< all expanded strings together
};

class document {
 public:
  /// Read and parse `file`. Throws config_error (unreadable, too large, invalid YAML ...).
  static document load_file(const std::filesystem::path& file, limits bounds = {}) {
    auto name = file.string();
    auto fail = [&](std::string expected, std::string got) {
      return config_error({name, 1, 1}, {}, std::move(expected), std::move(got));
    };
    auto system_says = [](std::string text) {  // "Too many levels ..." -> "too many levels ..."
      if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
        text[0] = static_cast<char>(text[0] - 'A' + 'a');
      return text;
    };
    std::error_code ec;
    auto status = std::filesystem::status(file, ec);
    // What the system says (a symlink loop, a path through a file, no permission ...).
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw fail("a readable config file", system_says(ec.message()));
    if (!std::filesystem::exists(status)) throw fail("a readable config file", "no such file");
    if (std::filesystem::is_directory(status)) throw fail("a readable config file", "a directory");
    std::ifstream in(file, std::ios::binary);
    if (!in)
      throw fail("a readable config file",
                 fmt::format("a file that cannot be opened ({})",
                             system_says(std::generic_category().message(errno))));
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      text.append(buffer, static_cast<std::size_t>(in.gcount()));
      if (text.size() > bounds.max_bytes)
        throw fail(fmt::format("a config of at most {} bytes", bounds.max_bytes), "a larger file");
    }
    if (in.bad()) throw fail("a readable config file", "a read error");
    return parse(text, std::move(name), bounds);
  }

  /// Parse `text`; `name` stands for the file in messages.
  static document parse(std::string_view text, std::string name = "<string>", limits bounds = {}) {
    if (text.size() > bounds.max_bytes)
      throw config_error({name, 1, 1}, {},
                         fmt::format("a config of at most {} bytes", bounds.max_bytes),
                         fmt::format("{} bytes", text.size()));
    if (auto nul = text.find('\0'); nul != std::string_view::npos) {
      auto [line, column] = line_column(text, nul);
      throw config_error({name, line, column}, {}, "YAML text", "a NUL byte (a binary file?)");
    }
    document doc;
    doc.bounds_ = bounds;
    auto table = std::make_shared<detail::source_table>();
    table->file = std::make_shared<detail::source>(detail::source{name, {}, 0});
    doc.sources_ = table;
    std::vector<YAML::Node> docs = detail::load_yaml(std::string(text), *table->file);
    if (docs.size() > 1) {
      auto mark = docs[1].Mark();
      throw config_error(detail::locate(mark, *table->file), {}, "one YAML document",
                         fmt::format("{} documents", docs.size()));
    }
    if (!docs.empty()) doc.root_.reset(docs[0]);
    if (!doc.root_.IsMap()) {
      auto r = doc.root();
      throw config_error(
          r.where(), {}, "a mapping of sections at the top level (hooks:, trainer: ...)",
          docs.empty() || r.is_null() ? std::string("an empty document") : r.describe());
    }
    return doc;
  }

  const std::string& name() const { return sources_->file->name; }
  const limits& bounds() const { return bounds_; }

  /// The whole document.
  value root() const {
    value v;
    v.node_.reset(root_);
    v.mark_ = root_.Mark();
    v.sources_ = sources_;
    v.src_ = sources_->file;
    return v;
  }

  /// Apply a command-line override "a.b=value": the value is parsed as YAML (`3` is a
  /// number, `true` a boolean, `[1, 2]` a list, `abc` a string, nothing null). Every key
  /// but the last must exist; the last may be new (an unknown parameter is then reported
  /// where the builder reads it). Throws config_error.
  void set(std::string_view assignment) {
    auto table = std::make_shared<detail::source_table>(*sources_);
    table->overrides.push_back(detail::apply_override(root_, assignment));
    sources_ = table;
    resolved_.clear();  // the tree changed
    expanded_ = 0;
  }

  /// Check the whole document: nesting depth, node count, keys (scalars, each once),
  /// and every `${...}` (its syntax, its target, no cycle). Throws config_error.
  void validate() const {
    struct pending {
      value v;
      std::size_t depth;
    };
    std::vector<pending> stack{{root(), 0}};
    std::size_t visited = 0;
    while (!stack.empty()) {
      auto [v, depth] = std::move(stack.back());
      stack.pop_back();
      if (++visited > bounds_.max_nodes)
        throw config_error(
            v.where(), v.key(),
            fmt::format("at most {} nodes (aliases count each use)", bounds_.max_nodes), "more");
      if (depth > bounds_.max_depth)
        throw config_error(v.where(), v.key(),
                           fmt::format("at most {} levels of nesting", bounds_.max_depth),
                           "deeper nesting");
      if (v.is_map()) {
        std::unordered_map<std::string, std::size_t> seen;  // key -> its line
        auto items = v.items();
        for (const auto& it : items) {
          if (!it.key.is_scalar())
            throw config_error(it.key.where(), v.key(), "a string key", it.key.describe());
          auto [first, fresh] = seen.emplace(it.name, it.key.where().line);
          if (!fresh)
            throw config_error(
                it.key.where(), it.val.key(), "each key once in a mapping",
                fmt::format("'{}' again (first at line {})", it.name, first->second));
        }
        for (auto it = items.rbegin(); it != items.rend(); ++it)
          stack.push_back({it->val, depth + 1});
      } else if (v.is_sequence()) {
        auto elements = v.elements();
        for (auto it = elements.rbegin(); it != elements.rend(); ++it)
          stack.push_back({*it, depth + 1});
      } else if (v.is_scalar() && v.scalar().find("${") != std::string::npos) {
        auto parsed = parse_interpolation(v.scalar());
        if (auto* whole = parsed.whole(); whole && whole->kind == interpolation_piece::ref)
          at(whole->content, &v);  // dangling? (cycles show when building)
        else
          resolve(v);
      }
    }
  }

  /// The value at dotted `path` (list items by index: `hooks.0`), following `${...}` on
  /// the way. `from`, when given, is where the path was written (for messages).
  value at(std::string_view path, const value* from = nullptr) const {
    auto written = from ? from->scalar() : fmt::format("'{}'", path);
    auto fail = [&](std::string got, std::string note = {}) {
      location where = from ? from->where() : location{name(), 1, 1};
      return config_error(where, from ? from->key() : std::string(path), "a path that exists",
                          std::move(got), std::move(note));
    };
    if (auto problem = detail::path_problem(path); !problem.empty())
      throw fail(fmt::format("{}: {}", written, problem));
    value v = root();
    for (auto seg : detail::split_path(path)) {
      v = resolve(v);
      auto where_name = v.key().empty() ? std::string("<document>") : v.key();
      if (v.is_reference())
        throw fail(fmt::format("{}: {} is an object reference ({}), whose keys a path cannot reach",
                               written, where_name, v.scalar()));
      if (v.is_sequence()) {
        auto index = detail::parse_index(seg);
        auto elements = v.elements();
        if (!index || *index >= elements.size())
          throw fail(fmt::format("{}: {} is a list of {} items, '{}' is none of its indices",
                                 written, where_name, elements.size(), seg));
        v = elements[*index];
      } else if (v.is_map()) {
        auto next = v.find(seg);
        if (!next)
          throw fail(fmt::format("{}: '{}' is no key of {}", written, seg, where_name),
                     detail::closest_note(seg, v.keys()));
        v = *next;
      } else {
        throw fail(fmt::format("{}: {} is {}, not a mapping", written, where_name, v.describe()));
      }
    }
    return v;
  }

  /// `v` with its `${...}` resolved: a whole `${a.b}` becomes the value at a.b (its type
  /// kept), text with `${a.b}` in it the text with a.b's scalar substituted; `${ref:...}`
  /// stays (the builder builds it). Throws config_error (dangling, cyclic, not a scalar).
  value resolve(const value& v) const {
    if (!v.is_scalar() || v.scalar().find('$') == std::string::npos) return v;
    auto parsed = parse_interpolation(v.scalar());
    if (parsed.error)
      throw config_error(v.where(), v.key(), parsed.error->expected, parsed.error->got);
    if (!parsed.has_references()) {
      // Only "$${" escapes: the text without them.
      std::string text;
      for (const auto& p : parsed.pieces) text += p.content;
      if (text == v.scalar()) return v;
      return v.replaced(YAML::Node(text), v.via());
    }
    auto* whole = parsed.whole();
    if (whole && whole->kind == interpolation_piece::ref) return v;
    // Resolved before: the same result, seen from where `v` was reached.
    if (auto done = resolved_.find(v.path()); done != resolved_.end()) {
      value out = done->second;
      out.key_ = v.key_;
      out.mark_ = v.mark_;
      out.src_ = v.src_;
      return out;
    }

    for (const auto& [path, key] : resolving_)
      if (path == v.path()) {
        std::string chain;
        bool on = false;
        for (const auto& [p, k] : resolving_) {
          on = on || p == v.path();
          if (on) chain += k + " -> ";
        }
        throw config_error(v.where(), v.key(), "${...} that does not refer to itself",
                           fmt::format("the cycle {}{}", chain, v.key()));
      }
    if (resolving_.size() >= bounds_.max_depth)
      throw config_error(v.where(), v.key(),
                         fmt::format("at most {} nested ${{...}}", bounds_.max_depth), "more");
    resolving_.emplace_back(v.path(), v.key());
    struct pop {
      std::vector<std::pair<std::string, std::string>>& s;
      ~pop() { s.pop_back(); }
    } guard{resolving_};

    if (whole) {
      value out = resolve(at(whole->content, &v));
      out.key_ = v.key_;
      out.mark_ = v.mark_;
      out.src_ = v.src_;
      out.via_ = "${" + whole->content + "}";
      return remember(v, std::move(out));
    }
    std::string text;
    auto append = [&](const std::string& piece) {
      if (text.size() + piece.size() > bounds_.max_text)
        throw config_error(v.where(), v.key(),
                           fmt::format("a string of at most {} bytes with its ${{...}} expanded",
                                       bounds_.max_text),
                           fmt::format("{} bytes or more", text.size() + piece.size()));
      if (expanded_ + piece.size() > bounds_.max_expanded)
        throw config_error(v.where(), v.key(),
                           fmt::format("at most {} bytes of expanded ${{...}} in the whole config",
                                       bounds_.max_expanded),
                           "more");
      expanded_ += piece.size();
      text += piece;
    };
    for (const auto& p : parsed.pieces) {
      if (p.kind == interpolation_piece::text) {
        append(p.content);
        continue;
      }
      if (p.kind == interpolation_piece::ref)
        throw config_error(v.where(), v.key(), "${ref:...} as the whole value",
                           fmt::format("{} inside text", detail::quote(v.scalar())));
      value target = resolve(at(p.content, &v));
      if (!target.is_scalar())
        throw config_error(v.where(), v.key(),
                           fmt::format("a scalar at {} to put into text", p.content),
                           target.describe());
      append(target.scalar());
    }
    return remember(v, v.replaced(YAML::Node(text), detail::quote(v.scalar())));
  }

 private:
  document() = default;

  /// Keep `out`, the resolution of `v`, for the next time its node is resolved (a value
  /// outside the document, without a path, is not kept).
  value remember(const value& v, value out) const {
    if (!v.path().empty()) resolved_.emplace(v.path(), out);
    return out;
  }

  static std::pair<std::size_t, std::size_t> line_column(std::string_view text,
                                                         std::size_t offset) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return {line, column};
  }

  YAML::Node root_;
  limits bounds_;
  std::shared_ptr<const detail::source_table> sources_;
  mutable std::vector<std::pair<std::string, std::string>>
      resolving_;                                            // (path, key) being resolved
  mutable std::unordered_map<std::string, value> resolved_;  // path -> its resolved value
  mutable std::size_t expanded_ = 0;                         // bytes of expanded text so far
};

}  // namespace hookforge::config