// hookforge/config/value.hpp — one node of a config with its key path and where it was
// written (a value), and a mapping's entries (value_item).
//
// A `value` is a YAML node with its key path and location. A value reached through
// `${a.b}` keeps the key path and location of where `${a.b}` was written, and says so
// in messages ("'abc' (from ${a.b})"). Values come from a document (document.hpp).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "hookforge/config/detail/dotted_path.hpp"
#include "hookforge/config/detail/source.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/interpolation.hpp"

namespace hookforge::config {

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
    if (src_) return detail::locate(mark_, *src_);
    return detail::locate(mark_, detail::source{"<config>", {}, 0});
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

}  // namespace hookforge::config
