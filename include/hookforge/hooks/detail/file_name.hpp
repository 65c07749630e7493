// hookforge/hooks/detail/file_name.hpp — one file name, not a path: what a hook accepts
// where it names a file inside its own folder (MetricsPlot's csv and image, the checkpoint
// that last_checkpoint names), so that the name cannot lead out of the folder.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace hookforge::detail {

/// Whether `name` is one file name: not empty, no '/' or control character, neither "." nor
/// "..", and at most 255 bytes (the longest name Linux file systems hold).
inline bool is_file_name(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         std::none_of(name.begin(), name.end(), [](char c) {
           return c == '/' || std::iscntrl(static_cast<unsigned char>(c));
         });
}

}  // namespace hookforge::detail
