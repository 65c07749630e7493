// hookforge/config/document.hpp — a loaded config: YAML, where each value came from, `--set`
// overrides, and the `${...}` forms resolved.
//
//   auto doc = hookforge::config::document::load_file("run.yaml");
//   doc.set("trainer.params.epochs=3");          // --set: the value is parsed as YAML
//   doc.validate();                              // limits, keys, every ${...} (the builder calls
//   it) hookforge::config::value v = doc.at("trainer.params.epochs");
//
// Loading never crashes on bad input: an unreadable file, invalid YAML (yaml-cpp's
// mark gives the line), binary data, a file over `limits::max_bytes`, nesting deeper
// than `limits::max_depth`, alias bombs (`limits::max_nodes` counts each visit),
// duplicate keys, and dangling or cyclic `${...}` are each a config_error naming the
// file, line, column and key path.
//
// A `value` is a YAML node with its key path and location. A value reached through
// `${a.b}` keeps the key path and location of where `${a.b}` was written, and says so
// in messages ("'abc' (from ${a.b})").
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "hookforge/config/error.hpp"
#include "hookforge/config/interpolation.hpp"

namespace hookforge::config {

/// Bounds on what a config may be; past them loading stops with a config_error.
struct limits {
  std::size_t max_bytes = std::size_t{4} << 20;  ///< file size
  std::size_t max_depth = 64;         ///< nesting, `${}` chains, objects built within objects
  std::size_t max_nodes = 1'000'000;  ///< nodes visited, counting each alias use
};

namespace detail {

/// Where a node came from: the file, or one `--set` (whose nodes count columns from its value).
struct source {
  std::string name;  ///< the file, or "<--set a.b=v>"
  std::string path;  ///< a --set's dotted path; empty for the file
  std::size_t column_offset = 0;
};

struct source_table {
  std::shared_ptr<const source> file;
  std::vector<std::shared_ptr<const source>> overrides;  ///< in the order given

  /// The source of the node at dotted `path`: the last --set at or above it, else the file.
  std::shared_ptr<const source> of(std::string_view path) const {
    for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
      const auto& p = (*it)->path;
      if (path == p || (path.size() > p.size() && path.starts_with(p) && path[p.size()] == '.'))
        return *it;
    }
    return file;
  }
};

inline std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  while (true) {
    auto dot = path.find('.');
    out.push_back(path.substr(0, dot));
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return out;
}

inline std::optional<std::size_t> parse_index(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

inline std::string join_key(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  return fmt::format("{}.{}", parent, name);
}

/// Where a YAML stream's parser stops making progress, if it does. yaml-cpp up to 0.8.0
/// reports an empty document for a token no value can start with (a ',' where a document
/// begins) without consuming it, so YAML::LoadAll collects empty documents until memory
/// runs out (jbeder/yaml-cpp#1040, fixed after 0.8.0 by #1319; Debian 12 has 0.7.0).
/// This pass reads the documents' events without building nodes and stops at a document
/// that starts where the previous one did; every document YAML accepts consumes a token.
/// Throws what the parser throws for invalid YAML.
inline std::optional<YAML::Mark> stuck_document(const std::string& text) {
  struct starts : YAML::EventHandler {
    YAML::Mark start = YAML::Mark::null_mark();
    void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  std::optional<int> previous;
  for (starts doc; parser.HandleNextDocument(doc); doc = starts{}) {
    if (previous == doc.start.pos) return doc.start;
    previous = doc.start.pos;
  }
  return std::nullopt;
}

}  // namespace detail

class document;
struct value_item;

/// One node of a config, with its key path and where it was written.
class value {
 public:
  value() = default;
  value(const value&) = default;
  // YAML::Node's operator= writes into the node it refers to (every alias of it sees the
  // change); a value rebinds instead.
  value& operator=(const value& other) {
    if (this != &other) {
      node_.reset(other.node_);
      key_ = other.key_;
      path_ = other.path_;
      via_ = other.via_;
      mark_ = other.mark_;
      sources_ = other.sources_;
      src_ = other.src_;
    }
    return *this;
  }

  const YAML::Node& node() const { return node_; }
  /// The key path, as messages show it: `a.hooks[0].params`.
  const std::string& key() const { return key_; }
  /// The dotted path of the node in the document (`a.hooks.0.params`).
  const std::string& path() const { return path_; }
  /// "${a.b}" when this value was reached through that interpolation.
  const std::string& via() const { return via_; }

  location where() const {
    location at{src_ ? src_->name : std::string("<config>"), 1, 1};
    if (!mark_.is_null()) {
      at.line = static_cast<std::size_t>(mark_.line) + 1;
      at.column = static_cast<std::size_t>(mark_.column) + 1 + (src_ ? src_->column_offset : 0);
    }
    return at;
  }

  bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  const std::string& scalar() const { return node_.Scalar(); }
  /// A scalar written in quotes (or tagged !!str): a string, never a number or boolean.
  bool quoted() const {
    if (!node_.IsScalar()) return false;
    const auto& tag = node_.Tag();
    return tag == "!" || tag == "tag:yaml.org,2002:str";
  }
  /// A whole-value `${ref:path}`; its path, else empty.
  std::string reference() const {
    if (!is_scalar()) return {};
    auto parsed = parse_interpolation(scalar());
    auto* whole = parsed.whole();
    return whole && whole->kind == interpolation_piece::ref ? whole->content : std::string{};
  }
  bool is_reference() const { return !reference().empty(); }

  /// The value as an error message shows it: 'text', "quoted", null, a mapping, a list.
  std::string describe() const {
    std::string text;
    if (is_null())
      text = "null";
    else if (is_map())
      text = "a mapping";
    else if (is_sequence())
      text = "a list";
    else if (is_reference())
      text = detail::quote(scalar()) + " (an object reference)";
    else
      text = detail::quote(scalar(), quoted() ? '"' : '\'');
    if (!via_.empty()) text += " (from " + via_ + ")";
    return text;
  }

  /// The value of key `name` of a mapping (nothing when absent or not a mapping).
  std::optional<value> find(std::string_view name) const {
    if (!node_.IsMap()) return std::nullopt;
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == name)
        return child(it->second, name, it->second.Mark());
    return std::nullopt;
  }

  /// The entries of a mapping, in file order (empty for anything else).
  std::vector<value_item> items() const;
  /// The items of a list (empty for anything else).
  std::vector<value> elements() const {
    std::vector<value> out;
    if (!node_.IsSequence()) return out;
    std::size_t i = 0;
    for (auto it = node_.begin(); it != node_.end(); ++it, ++i) out.push_back(element(*it, i));
    return out;
  }
  /// The names of a mapping's keys.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    if (!node_.IsMap()) return out;
    for (auto it = node_.begin(); it != node_.end(); ++it)
      out.push_back(it->first.IsScalar() ? it->first.Scalar() : std::string("?"));
    return out;
  }

  /// A value for a new node standing where this one is (an interpolated string).
  value replaced(YAML::Node node, std::string via) const {
    value v = *this;
    v.node_.reset(node);
    v.via_ = std::move(via);
    return v;
  }

 private:
  friend class document;

  value child(const YAML::Node& node, std::string_view name, YAML::Mark mark) const {
    value v;
    v.node_.reset(node);
    v.key_ = detail::join_key(key_, name);
    v.path_ = detail::join_key(path_, name);
    v.mark_ = mark;
    v.sources_ = sources_;
    v.src_ = sources_ ? sources_->of(v.path_) : src_;
    return v;
  }
  value element(const YAML::Node& node, std::size_t i) const {
    value v;
    v.node_.reset(node);
    v.key_ = fmt::format("{}[{}]", key_, i);
    v.path_ = detail::join_key(path_, std::to_string(i));
    v.mark_ = node.Mark();
    v.sources_ = sources_;
    v.src_ = sources_ ? sources_->of(v.path_) : src_;
    return v;
  }

  YAML::Node node_;
  std::string key_, path_, via_;
  YAML::Mark mark_ = YAML::Mark::null_mark();
  std::shared_ptr<const detail::source_table> sources_;
  std::shared_ptr<const detail::source> src_;
};

/// One entry of a mapping.
struct value_item {
  std::string name;
  value key;  ///< the key itself (its location is the key's)
  value val;
};

inline std::vector<value_item> value::items() const {
  std::vector<value_item> out;
  if (!node_.IsMap()) return out;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    auto v = child(it->second, name, it->second.Mark());
    auto k = v;
    k.node_.reset(it->first);
    k.mark_ = it->first.Mark();
    out.push_back({name, std::move(k), std::move(v)});
  }
  return out;
}

class document {
 public:
  /// Read and parse `file`. Throws config_error (unreadable, too large, invalid YAML ...).
  static document load_file(const std::filesystem::path& file, limits bounds = {}) {
    auto name = file.string();
    auto fail = [&](std::string expected, std::string got) {
      return config_error({name, 1, 1}, {}, std::move(expected), std::move(got));
    };
    std::error_code ec;
    auto status = std::filesystem::status(file, ec);
    if (ec || !std::filesystem::exists(status))
      throw fail("a readable config file", "no such file");
    if (std::filesystem::is_directory(status)) throw fail("a readable config file", "a directory");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw fail("a readable config file", "a file that cannot be opened");
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
    std::vector<YAML::Node> docs = load_yaml(std::string(text), table->file);
    if (docs.size() > 1) {
      auto mark = docs[1].Mark();
      throw config_error(doc.locate(mark, table->file), {}, "one YAML document",
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
    auto src = std::make_shared<detail::source>();
    src->name = fmt::format("<--set {}>", assignment);
    auto fail = [&](std::string key, std::string expected, std::string got, std::string note = {}) {
      return config_error({src->name, 1, 1}, std::move(key), std::move(expected), std::move(got),
                          std::move(note));
    };
    auto eq = assignment.find('=');
    if (eq == std::string_view::npos) throw fail({}, "key.path=value", detail::quote(assignment));
    auto path = assignment.substr(0, eq);
    auto text = assignment.substr(eq + 1);
    if (auto problem = detail::path_problem(path); !problem.empty())
      throw fail(std::string(path), "a dotted key path before '='", problem);
    src->column_offset = eq + 1;

    YAML::Node parsed;
    {
      auto nodes = load_yaml(std::string(text), src);
      if (nodes.size() > 1)
        throw fail(std::string(path), "one YAML value after '='",
                   fmt::format("{} documents", nodes.size()));
      parsed.reset(nodes.empty() ? YAML::Node(YAML::NodeType::Null) : nodes[0]);
    }

    auto segments = detail::split_path(path);
    YAML::Node current = root_;
    std::string key, canonical;
    for (std::size_t i = 0; i < segments.size(); ++i) {
      auto seg = segments[i];
      bool last = i + 1 == segments.size();
      std::string parent_key = key;
      if (current.IsSequence()) {
        auto index = detail::parse_index(seg);
        if (!index || *index >= current.size())
          throw fail(std::string(path),
                     current.size() == 0
                         ? fmt::format("an index of {} (an empty list has none)", parent_key)
                         : fmt::format("an index of {} (0 to {})", parent_key, current.size() - 1),
                     detail::quote(seg));
        key = fmt::format("{}[{}]", key, *index);
        canonical = detail::join_key(canonical, seg);
        if (last) {
          current[*index] = parsed;
        } else {
          YAML::Node next = current[*index];
          if (next.IsNull()) {
            current[*index] = YAML::Node(YAML::NodeType::Map);
            next = current[*index];
          }
          current.reset(next);
        }
        continue;
      }
      if (!current.IsMap())
        throw fail(std::string(path),
                   fmt::format("a mapping at {}", parent_key.empty() ? "<document>" : parent_key),
                   current.IsScalar() ? detail::quote(current.Scalar()) : std::string("null"));
      key = detail::join_key(key, seg);
      canonical = detail::join_key(canonical, seg);
      bool found = false;
      YAML::Node existing;
      std::vector<std::string> names;
      for (auto it = current.begin(); it != current.end(); ++it) {
        if (!it->first.IsScalar()) continue;
        names.push_back(it->first.Scalar());
        if (it->first.Scalar() == seg) {
          found = true;
          existing.reset(it->second);
        }
      }
      if (last) {
        // Remove, then insert: assigning to the existing node would change every alias of it.
        if (found) current.remove(std::string(seg));
        current.force_insert(std::string(seg), parsed);
        break;
      }
      if (!found)
        throw fail(std::string(path),
                   fmt::format("a key of {}", parent_key.empty() ? "<document>" : parent_key),
                   detail::quote(seg), detail::closest_note(seg, names));
      if (existing.IsNull()) {
        current.remove(std::string(seg));
        current.force_insert(std::string(seg), YAML::Node(YAML::NodeType::Map));
        for (auto it = current.begin(); it != current.end(); ++it)
          if (it->first.IsScalar() && it->first.Scalar() == seg) existing.reset(it->second);
      }
      current.reset(existing);
    }
    src->path = canonical;
    auto table = std::make_shared<detail::source_table>(*sources_);
    table->overrides.push_back(src);
    sources_ = table;
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
      value target = resolve(at(whole->content, &v));
      value out = target;
      out.key_ = v.key_;
      out.mark_ = v.mark_;
      out.src_ = v.src_;
      out.via_ = "${" + whole->content + "}";
      return out;
    }
    std::string text;
    for (const auto& p : parsed.pieces) {
      if (p.kind == interpolation_piece::text) {
        text += p.content;
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
      text += target.scalar();
    }
    return v.replaced(YAML::Node(text), detail::quote(v.scalar()));
  }

 private:
  document() = default;

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

  static location locate(const YAML::Mark& mark, const std::shared_ptr<const detail::source>& src) {
    if (mark.is_null()) return {src->name, 1, 1};
    return {src->name, static_cast<std::size_t>(mark.line) + 1,
            static_cast<std::size_t>(mark.column) + 1 + src->column_offset};
  }

  static std::vector<YAML::Node> load_yaml(const std::string& text,
                                           const std::shared_ptr<const detail::source>& src) {
    std::optional<YAML::Mark> stuck;
    try {
      stuck = detail::stuck_document(text);
      if (!stuck) return YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      throw config_error(locate(e.mark, src), {}, "valid YAML",
                         e.msg.empty() ? std::string(e.what()) : e.msg);
    } catch (const std::exception& e) {
      throw config_error({src->name, 1, 1}, {}, "valid YAML", e.what());
    }
    auto pos = static_cast<std::size_t>(stuck->pos);
    throw config_error(
        locate(*stuck, src), {}, "valid YAML",
        fmt::format("{} where no YAML value can start",
                    pos < text.size() ? detail::quote(std::string_view(text).substr(pos, 1))
                                      : std::string("the end of the text")));
  }

  YAML::Node root_;
  limits bounds_;
  std::shared_ptr<const detail::source_table> sources_;
  mutable std::vector<std::pair<std::string, std::string>>
      resolving_;  // (path, key) being resolved
};

}  // namespace hookforge::config
