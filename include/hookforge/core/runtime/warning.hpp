// hookforge/core/runtime/warning.hpp — where runtime (config-driven) binding warnings go.
//
// The default sink prints "hookforge warning: ..." to stderr. Replace it to
// route warnings to a logger, or capture them in a test with `capture_warnings`.
// No {fmt} here: the torch layer (the Trainer) warns too, and its headers do not include it.
#pragma once

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hookforge {

using warning_sink = std::function<void(std::string_view)>;

/// Thrown in strict mode instead of warning, and for bindings that cannot work.
class binding_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline warning_sink& sink_storage() {
  static warning_sink sink = [](std::string_view text) {
    std::fprintf(stderr, "hookforge warning: %.*s\n", static_cast<int>(text.size()), text.data());
  };
  return sink;
}
}  // namespace detail

/// Install `sink`; returns the previous one.
inline warning_sink set_warning_sink(warning_sink sink) {
  return std::exchange(detail::sink_storage(), std::move(sink));
}

inline void warn(std::string_view text) { detail::sink_storage()(text); }

/// Collects warnings for its lifetime (tests, `--check` reports).
class capture_warnings {
 public:
  capture_warnings()
      : previous_(set_warning_sink([this](std::string_view t) { messages.emplace_back(t); })) {}
  ~capture_warnings() { set_warning_sink(std::move(previous_)); }
  capture_warnings(const capture_warnings&) = delete;
  capture_warnings& operator=(const capture_warnings&) = delete;

  std::vector<std::string> messages;

 private:
  warning_sink previous_;
};

}  // namespace hookforge
