// hookforge/core/type_name.hpp — the readable name of a type, at compile time.
//
// Used for warning texts, binding tables and default state keys. The name is
// whatever the compiler prints for the type, so it is stable across runs of one build.
#pragma once

#include <string_view>

namespace hookforge {

template <class T>
constexpr std::string_view type_name() {
#if defined(__clang__)
  constexpr std::string_view text = __PRETTY_FUNCTION__;  // "... [T = Foo]"
  constexpr std::string_view open = "T = ";
  constexpr auto begin = text.find(open) + open.size();
  constexpr auto end = text.rfind(']');
#elif defined(__GNUC__)
  constexpr std::string_view text = __PRETTY_FUNCTION__;  // "... [with T = Foo; ...]"
  constexpr std::string_view open = "T = ";
  constexpr auto begin = text.find(open) + open.size();
  constexpr auto end = text.find_first_of(";]", begin);
#else
#error "hookforge::type_name supports GCC and Clang"
#endif
  return text.substr(begin, end - begin);
}

/// `ns::Foo<int, Bar>` -> `Foo`: the name a user wrote, for messages.
constexpr std::string_view short_name(std::string_view full) {
  auto end = full.find('<');
  if (end == std::string_view::npos) end = full.size();
  auto head = full.substr(0, end);
  auto colon = head.rfind("::");
  return colon == std::string_view::npos ? head : head.substr(colon + 2);
}

template <class T>
constexpr std::string_view short_type_name() {
  return short_name(type_name<T>());
}

}  // namespace hookforge
