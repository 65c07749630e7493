// hookforge/config/convert.hpp — how a config value becomes a C++ value of a parameter's type.
//
// `value_traits<T>` says what a T looks like in YAML (`expected()`, for messages and
// parameter tables), reads one from a value whose `${...}` is already resolved (`read`), and
// may say how a parameter table (`hookforge-run --list`) shows a default (`show`; without
// it the table says "(set)"). A trait, not an overload set: where it is specialised does
// not change what a table shows.
//
//   bool                      true / false (YAML 1.2: also True, FALSE ...; not yes/no)
//   integers                  decimal, range-checked for the type: 1e3 or 3.0 are not integers
//   float, double             finite numbers (.inf where a field allows it); past the type's range
//   is an error std::string, path         any scalar (quoted or not), not null std::vector<T> a
//   list;  std::map<std::string, T>: a mapping std::optional<T>          T, or null
//
// A quoted scalar is a string: "3" is not a number. Objects built from entries (hooks,
// models ...) are read by builder.hpp. Specialise value_traits for a type of your own:
//
//   template <> struct hookforge::config::value_traits<Color> {
//     static std::string expected() { return "a color (red, green)"; }
//     template <class Builder> static Color read(Builder&, const value& v) { ... throw config_error
//     ... } static std::string show(Color c) { return c == Color::red ? "red" : "green"; }  //
//     optional
//   };
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/document.hpp"
#include "hookforge/config/error.hpp"

namespace hookforge::config {

/// How a T is read from a config (see the top of this header). Unspecialised: not readable.
template <class T>
struct value_traits;

template <class T>
concept readable = requires {
  { value_traits<T>::expected() } -> std::convertible_to<std::string>;
};

namespace detail {

[[noreturn]] inline void wrong(const value& v, std::string expected) {
  throw config_error(v.where(), v.key(), std::move(expected), v.describe());
}

/// A plain scalar (not quoted, not an object reference, not null), or an error.
inline const std::string& plain_scalar(const value& v, const std::string& expected) {
  if (!v.is_scalar() || v.quoted() || v.is_reference()) wrong(v, expected);
  return v.scalar();
}

template <class T>
constexpr bool is_optional = false;
template <class T>
constexpr bool is_optional<std::optional<T>> = true;

/// A default value as a parameter table shows it: value_traits<T>::show, else "empty" or "(set)".
template <class T>
std::string show(const T& x);

}  // namespace detail

template <>
struct value_traits<bool> {
  static std::string expected() { return "a boolean (true or false)"; }
  template <class B>
  static bool read(B&, const value& v) {
    const auto& s = detail::plain_scalar(v, expected());
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    detail::wrong(v, expected());
  }
  static std::string show(bool x) { return x ? "true" : "false"; }
};

template <class T>
  requires(std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>)
struct value_traits<T> {
  static std::string expected() {
    if constexpr (sizeof(T) >= 8 && std::is_signed_v<T>)
      return "an integer";
    else
      return fmt::format("an integer in [{}, {}]", std::numeric_limits<T>::min(),
                         std::numeric_limits<T>::max());
  }
  template <class B>
  static T read(B&, const value& v) {
    const auto& s = detail::plain_scalar(v, expected());
    std::string_view text = s;
    if (text.starts_with('+')) text.remove_prefix(1);
    T out{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (text.empty() || end != text.data() + text.size()) detail::wrong(v, expected());
    if (ec == std::errc::result_out_of_range)
      throw config_error(v.where(), v.key(),
                         fmt::format("an integer in [{}, {}]", std::numeric_limits<T>::min(),
                                     std::numeric_limits<T>::max()),
                         v.describe());
    if (ec != std::errc{}) detail::wrong(v, expected());
    return out;
  }
  static std::string show(T x) { return fmt::format("{}", x); }
};

namespace detail {

/// A YAML number as T. Infinities (.inf, -.inf) only where `infinite_ok` (a field such as
/// GradientClip's norm_type, field_spec::allowing_infinity), .nan never: where a config
/// means a number it means a finite one (`lr: .inf` would train to NaN).
template <std::floating_point T>
T read_floating(const value& v, bool infinite_ok) {
  const auto& s = plain_scalar(v, "a number");
  auto refuse = [&] {
    throw config_error(v.where(), v.key(), infinite_ok ? "a number or .inf" : "a finite number",
                       v.describe());
  };
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    if (!infinite_ok) refuse();
    return std::numeric_limits<T>::infinity();
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
    if (!infinite_ok) refuse();
    return -std::numeric_limits<T>::infinity();
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") refuse();
  std::string_view text = s;
  if (text.starts_with('+')) text.remove_prefix(1);
  // from_chars also takes "inf" and "nan", which YAML spells .inf and .nan.
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '.'))
    wrong(v, "a number");
  double out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (end != text.data() + text.size() ||
      (ec != std::errc{} && ec != std::errc::result_out_of_range))
    wrong(v, "a number");
  if (ec == std::errc::result_out_of_range ||
      std::abs(out) > static_cast<double>(std::numeric_limits<T>::max()))
    throw config_error(
        v.where(), v.key(),
        fmt::format("a number within ±{}", static_cast<double>(std::numeric_limits<T>::max())),
        v.describe());
  return static_cast<T>(out);
}

}  // namespace detail

template <std::floating_point T>
struct value_traits<T> {
  static std::string expected() { return "a number"; }
  template <class B>
  static T read(B&, const value& v) {
    return detail::read_floating<T>(v, false);
  }
  static std::string show(T x) { return fmt::format("{}", x); }
};

template <>
struct value_traits<std::string> {
  static std::string expected() { return "a string"; }
  template <class B>
  static std::string read(B&, const value& v) {
    if (!v.is_scalar() || v.is_reference()) detail::wrong(v, expected());
    return v.scalar();
  }
  static std::string show(const std::string& x) { return fmt::format("\"{}\"", x); }
};

template <>
struct value_traits<std::filesystem::path> {
  static std::string expected() { return "a path"; }
  template <class B>
  static std::filesystem::path read(B&, const value& v) {
    if (!v.is_scalar() || v.is_reference()) detail::wrong(v, expected());
    return std::filesystem::path(v.scalar());
  }
  static std::string show(const std::filesystem::path& x) {
    return fmt::format("\"{}\"", x.string());
  }
};

template <readable T>
struct value_traits<std::vector<T>> {
  static std::string expected() {
    return "a list of " + without_article(value_traits<T>::expected());
  }
  template <class B>
  static std::vector<T> read(B& b, const value& v) {
    if (!v.is_sequence()) detail::wrong(v, expected());
    std::vector<T> out;
    for (const auto& e : v.elements()) out.push_back(b.template read<T>(e));
    return out;
  }
  static std::string show(const std::vector<T>& x) {
    if (x.empty()) return "[]";
    if constexpr (!requires { value_traits<T>::show(x[0]); }) return "(set)";
    std::string out = "[";
    for (std::size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + detail::show(x[i]);
    return out + "]";
  }
  static std::string without_article(std::string text) {
    for (std::string_view a : {"a ", "an "})
      if (text.starts_with(a)) return text.substr(a.size());
    return text;
  }
};

template <readable T>
struct value_traits<std::map<std::string, T>> {
  static std::string expected() {
    return "a mapping of " +
           value_traits<std::vector<T>>::without_article(value_traits<T>::expected());
  }
  template <class B>
  static std::map<std::string, T> read(B& b, const value& v) {
    if (!v.is_map()) detail::wrong(v, expected());
    std::map<std::string, T> out;
    for (const auto& item : v.items()) out.emplace(item.name, b.template read<T>(item.val));
    return out;
  }
  static std::string show(const std::map<std::string, T>& x) { return x.empty() ? "{}" : "(set)"; }
};

template <readable T>
struct value_traits<std::optional<T>> {
  static std::string expected() { return value_traits<T>::expected() + " or null"; }
  template <class B>
  static std::optional<T> read(B& b, const value& v) {
    if (v.is_null()) return std::nullopt;
    return b.template read<T>(v);
  }
  static std::string show(const std::optional<T>& x) {
    return x ? detail::show(*x) : std::string("null");
  }
};

template <class T>
std::string detail::show(const T& x) {
  if constexpr (requires { value_traits<T>::show(x); })
    return value_traits<T>::show(x);
  else if constexpr (requires { x.empty(); })
    return x.empty() ? "empty" : "(set)";
  else
    return "(set)";
}

}  // namespace hookforge::config
