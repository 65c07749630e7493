// hookforge/core/fixed_string.hpp — a string usable as a template argument.
//
// Handler names travel in types (`binding<"clip_all_grads", ...>`) so that the
// compiler can print them in error messages and `list_bindings` can be constexpr.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace hookforge {

template <std::size_t N>
struct fixed_string {
  char data[N]{};

  constexpr fixed_string(const char (&text)[N]) { std::copy_n(text, N, data); }
  /// From a string worked out at compile time: fixed_string<text.size() + 1>(text).
  constexpr explicit fixed_string(std::string_view text) { std::copy_n(text.data(), N - 1, data); }

  constexpr std::string_view view() const { return {data, N - 1}; }
  constexpr operator std::string_view() const { return view(); }

  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const {
    return view() == other.view();
  }
};

}  // namespace hookforge
