// hookforge/hooks/detail/handler_ranges.hpp — hook handlers by name: the (hook, method,
// point) triples a HookProfiler or a SyncAudit numbers as slots, and a handler's call as a
// range "hook: <hook>.<method>@<point>" for RecordFunction's observers (ProfilerHook's
// traces, SyncAudit's attribution; torch/profiling/range.hpp).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "hookforge/torch/profiling/range.hpp"

namespace hookforge::detail::profiling {

struct slot_name {
  std::string hook, method, point;
  std::string label;  ///< "<hook>.<method>@<point>", its range's name after "hook: "
};

// (hook, method, point) triples, numbered process-wide at each one's first call.
inline std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
inline std::vector<slot_name>& registry() {
  static std::vector<slot_name> names;
  return names;
}
inline std::size_t register_slot(std::string_view hook, std::string_view method,
                                 std::string_view point) {
  std::lock_guard lock(registry_mutex());
  auto& names = registry();
  names.push_back({std::string(hook), std::string(method), std::string(point),
                   fmt::format("{}.{}@{}", hook, method, point)});
  return names.size() - 1;
}
inline slot_name name_of(std::size_t slot) {
  std::lock_guard lock(registry_mutex());
  return registry().at(slot);
}

/// A handler's call as a range "hook: <hook>.<method>@<point>" while LibTorch's
/// RecordFunction is observed (ProfilerHook, SyncAudit; torch/profiling/range.hpp).
class profiler_range {
 public:
  explicit profiler_range(std::size_t slot)
      : range_(range_kind::hook, [slot] {
          std::lock_guard lock(registry_mutex());
          return registry().at(slot).label;
        }) {}

 private:
  hookforge::detail::step_range range_;
};

}  // namespace hookforge::detail::profiling
