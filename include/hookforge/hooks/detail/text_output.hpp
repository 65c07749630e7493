// hookforge/hooks/detail/text_output.hpp — where a hook's printed table goes: a stream when
// one is given, else a C file (stdout by default), flushed, so that it shows where it was
// written among the run's other lines.
#pragma once

#include <cstdio>
#include <ostream>
#include <string>

namespace hookforge::detail {

inline void write_text(const std::string& text, std::ostream* stream, std::FILE* file) {
  if (stream) {
    *stream << text << std::flush;
  } else if (file) {
    std::fputs(text.c_str(), file);
    std::fflush(file);
  }
}

}  // namespace hookforge::detail
