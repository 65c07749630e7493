// hookforge/core/runtime/join.hpp — names joined with a separator, for runtime messages.
//
// fmt::join would need <fmt/format.h> (<fmt/ranges.h> from fmt 11 on), twice the
// preprocessed size of <fmt/core.h>, which is all the runtime layer needs otherwise.
#pragma once

#include <string>
#include <string_view>

namespace hookforge::detail {

/// "a, b, c" from any range of things convertible to std::string_view.
template <class Range>
std::string join(const Range& names, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& name : names) {
    if (!first) out.append(separator);
    out.append(std::string_view(name));
    first = false;
  }
  return out;
}

}  // namespace hookforge::detail
