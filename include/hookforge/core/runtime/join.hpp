// hookforge/core/runtime/join.hpp — names joined with a separator, for messages: every
// layer's list of names in an error ("a key of system (device, seed)") is made here.
//
//   hookforge::join_names(std::vector<std::string>{"a", "b"}, ", ")  // "a, b"
//
// fmt::join would need <fmt/format.h> (<fmt/ranges.h> from fmt 11 on), twice the
// preprocessed size of <fmt/core.h>, which is all the runtime layer needs otherwise.
#pragma once

#include <string>
#include <string_view>

namespace hookforge {

/// "a, b, c" from any range of things convertible to std::string_view.
template <class Range>
std::string join_names(const Range& names, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& name : names) {
    if (!first) out.append(separator);
    out.append(std::string_view(name));
    first = false;
  }
  return out;
}

}  // namespace hookforge
