// hookforge/config/registry.hpp — the registered classes a config's `_target` names, one
// registry per kind (hooks, models, optimisers ...).
//
// A kind is identified by its handle: the type its entries build and its parameters
// hold (`hook_handle` for hooks, `std::shared_ptr<Base>` for an object kind declared with
// HOOKFORGE_DECLARE_KIND). `kind_traits<Handle>` names the kind and says how a built
// object becomes the handle; `registry<Handle>` maps names to entries. register.hpp
// fills the registries (HOOKFORGE_REGISTER); builder.hpp reads them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/config/document.hpp"

namespace hookforge::config {

class builder;

/// What a kind is: specialised per handle type (hooks.hpp; HOOKFORGE_DECLARE_KIND).
/// A specialisation gives `name`, `entry_keys` (keys an entry may have besides _target
/// and params), `reserved_params` (params the kind reads itself unless the class takes
/// them), and `template <class T> static Handle wrap(builder&, const value& entry,
/// const value& params, std::shared_ptr<T>)`.
template <class Handle>
struct kind_traits;

template <class Handle>
concept kind_handle = requires {
  { kind_traits<Handle>::name } -> std::convertible_to<std::string_view>;
};

/// One parameter of a registered class, as messages and `--help`-like tables show it.
struct param_info {
  std::string name;
  std::string type;  ///< what it expects: "an integer", "a list of hooks" ...
  bool required = true;
  std::string fallback;  ///< the default, shown; empty when required
};

/// A registered class.
template <class Handle>
struct registry_entry {
  std::string name;
  std::string type;  ///< the C++ type
  std::string site;  ///< "file:line" of the registration
  std::vector<param_info> params;
  std::function<Handle(builder&, const value& entry)> build;
  std::vector<std::string> clashes;  ///< other types registered under the same name
};

/// What every registry tells about itself (for listings of all kinds).
class registry_base {
 public:
  virtual ~registry_base() = default;
  virtual std::string_view kind() const = 0;
  struct listing {
    std::string name, type, site;
    std::vector<param_info> params;
  };
  virtual std::vector<listing> list() const = 0;
};

namespace detail {
inline std::vector<const registry_base*>& all_registries() {
  static std::vector<const registry_base*> all;
  return all;
}
}  // namespace detail

/// Every registry that has an entry, in the order the kinds were first registered.
inline std::span<const registry_base* const> registries() { return detail::all_registries(); }

template <class Handle>
  requires kind_handle<Handle>
class registry final : public registry_base {
 public:
  static registry& instance() {
    static registry r;
    return r;
  }

  std::string_view kind() const override { return kind_traits<Handle>::name; }

  /// Add `entry`. The same name and type again (a header registering in several
  /// translation units) is ignored; another type under the same name is a clash,
  /// reported when a config names it.
  void add(registry_entry<Handle> entry) {
    if (entries_.empty()) detail::all_registries().push_back(this);
    auto it = entries_.find(entry.name);
    if (it == entries_.end()) {
      auto name = entry.name;
      entries_.emplace(std::move(name), std::move(entry));
      return;
    }
    if (it->second.type == entry.type) return;
    for (const auto& c : it->second.clashes)
      if (c == entry.type) return;
    it->second.clashes.push_back(entry.type);
  }

  const registry_entry<Handle>* find(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }

  /// The registered names, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, e] : entries_) out.push_back(name);
    return out;
  }

  std::vector<listing> list() const override {
    std::vector<listing> out;
    for (const auto& [name, e] : entries_) out.push_back({e.name, e.type, e.site, e.params});
    return out;
  }

 private:
  registry() = default;
  std::map<std::string, registry_entry<Handle>, std::less<>> entries_;
};

}  // namespace hookforge::config
