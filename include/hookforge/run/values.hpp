// hookforge/run/values.hpp — parameter types of the torch layer's registered classes that
// the config layer does not read by itself: enumerations (by name) and pairs (a list of two);
// each with how a parameter table (hookforge-run --list) shows its defaults.
//
//   template <> struct hookforge::run::enum_names<hookforge::warmup_mode> {
//     static constexpr std::pair<std::string_view, hookforge::warmup_mode> values[] = {
//         {"linear", hookforge::warmup_mode::linear}, {"constant",
//         hookforge::warmup_mode::constant}};
//   };
//   // now `arg<warmup_mode>("mode")` reads `mode: linear`; `mode: linaer` is a config_error
//   // "expected one of linear, constant, got 'linaer' (closest: linear)"
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/convert.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/core/runtime/join.hpp"

namespace hookforge::run {

/// Specialise with `static constexpr std::pair<std::string_view, E> values[]` to read E by name.
template <class E>
struct enum_names;

template <class E>
concept named_enum = std::is_enum_v<E> && requires { enum_names<E>::values; };

/// The name of `value` ("" when it has none).
template <named_enum E>
std::string_view name_of(E value) {
  for (const auto& [name, v] : enum_names<E>::values)
    if (v == value) return name;
  return {};
}

}  // namespace hookforge::run

namespace hookforge::config {

template <hookforge::run::named_enum E>
struct value_traits<E> {
  static std::vector<std::string_view> names() {
    std::vector<std::string_view> out;
    for (const auto& [name, v] : hookforge::run::enum_names<E>::values) out.push_back(name);
    return out;
  }
  static std::string expected() {
    return fmt::format("one of {}", hookforge::join_names(names(), ", "));
  }
  template <class B>
  static E read(B&, const value& v) {
    if (!v.is_scalar() || v.is_reference()) detail::wrong(v, expected());
    for (const auto& [name, e] : hookforge::run::enum_names<E>::values)
      if (name == v.scalar()) return e;
    auto candidates = names();
    throw config_error(
        v.where(), v.key(), expected(), v.describe(),
        detail::closest_note(v.scalar(), std::span<const std::string_view>(candidates)));
  }
  static std::string show(E x) { return std::string(hookforge::run::name_of(x)); }
};

/// A pair as a list of two: `value_range: [0, 1]`.
template <readable A, readable B>
struct value_traits<std::pair<A, B>> {
  static std::string expected() {
    return fmt::format("a list of two: {} and {}", value_traits<A>::expected(),
                       value_traits<B>::expected());
  }
  template <class Builder>
  static std::pair<A, B> read(Builder& b, const value& v) {
    if (!v.is_sequence()) detail::wrong(v, expected());
    auto items = v.elements();
    if (items.size() != 2) detail::wrong(v, expected());
    A first = b.template read<A>(items[0]);
    B second = b.template read<B>(items[1]);
    return {std::move(first), std::move(second)};
  }
  static std::string show(const std::pair<A, B>& x) {
    return fmt::format("[{}, {}]", detail::show(x.first), detail::show(x.second));
  }
};

}  // namespace hookforge::config
