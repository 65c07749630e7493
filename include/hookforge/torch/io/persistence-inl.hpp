// hookforge/torch/io/persistence-inl.hpp — the section names and load_plan's definitions:
// included by persistence.hpp header-only, compiled into hookforge::torch_compiled
// otherwise (core/build_mode.hpp).
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/io/persistence.hpp"

namespace hookforge {

HOOKFORGE_INLINE std::string hook_state_section(std::string_view component, std::string_view key) {
  return "hooks." + std::string(component) + "." + std::string(key);
}

HOOKFORGE_INLINE std::string hook_counts_section(std::string_view component, std::string_view key) {
  return "events." + std::string(component) + "." + std::string(key);
}

namespace detail {

HOOKFORGE_INLINE state_map counts_state(const std::vector<std::int64_t>& counts) {
  return {{"counts", c10::IValue(counts)}};
}

HOOKFORGE_INLINE std::vector<std::int64_t> counts_of(const state_map& state) {
  return state_value<std::vector<std::int64_t>>(state, "an event filter", "counts");
}

HOOKFORGE_INLINE void throw_not_a_state_map(std::string_view key, std::string_view section) {
  throw std::invalid_argument("hookforge: runtime hook '" + std::string(key) + "' (" +
                              std::string(section) +
                              ") returns a state that is not hookforge::state_map");
}

HOOKFORGE_INLINE void append_runtime_persistent_hooks(std::vector<persistent_hook>& out,
                                                      std::span<const runtime_counts> counted,
                                                      std::span<const runtime_state> states,
                                                      std::string_view component) {
  for (const auto& c : counted)
    out.push_back({hook_counts_section(component, c.key), true,
                   [c] { return counts_state(c.save(c.object)); },
                   [c](const state_map& s) { c.load(c.object, counts_of(s)); }});
  for (const auto& s : states) {
    std::string section = hook_state_section(component, s.key);
    out.push_back({section, false,
                   [s, section] {
                     auto any = s.save(s.object);
                     if (const auto* state = std::any_cast<state_map>(&any)) return *state;
                     throw_not_a_state_map(s.key, section);
                   },
                   [s](const state_map& state) { s.load(s.object, std::any(state)); }});
  }
}

}  // namespace detail

HOOKFORGE_INLINE state_map load_plan::read(const std::string& section,
                                           std::initializer_list<std::string_view> required) const {
  state_map state = in_->load_state(section);  // already names file and section on error
  for (auto key : required)
    if (!state.contains(std::string(key))) fail(section, "no entry '" + std::string(key) + "'");
  return state;
}

HOOKFORGE_INLINE void load_plan::add_state(std::string section, state_map state,
                                           std::function<state_map()> save,
                                           std::function<void(const state_map&)> load) {
  auto before = std::make_shared<std::optional<state_map>>();
  steps_.push_back({std::move(section),
                    [state = std::move(state), save, load, before] {
                      *before = save();
                      load(state);
                    },
                    [load, before] {
                      if (*before) load(**before);
                    }});
}

HOOKFORGE_INLINE void load_plan::add_step(std::string section, std::function<void()> apply,
                                          std::function<void()> undo) {
  steps_.push_back({std::move(section), std::move(apply), std::move(undo)});
}

HOOKFORGE_INLINE void load_plan::apply() {
  std::size_t at = 0;
  try {
    for (; at < steps_.size(); ++at) check(steps_[at].section, steps_[at].apply);
  } catch (...) {
    // The failed step is undone too: it may have changed its object part way.
    for (std::size_t i = at + 1; i-- > 0;) {
      try {
        if (steps_[i].undo) steps_[i].undo();
      } catch (...) {
        // Restoring what the object itself gave is not expected to fail; the load
        // error is the one to report.
      }
    }
    throw;
  }
}

HOOKFORGE_INLINE void load_plan::fail(const std::string& section,
                                      const std::string& message) const {
  throw checkpoint_error("hookforge checkpoint '" + in_->path().string() + "': section '" +
                         section + "': " + message);
}

}  // namespace hookforge
