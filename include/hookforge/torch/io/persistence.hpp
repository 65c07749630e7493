// hookforge/torch/io/persistence.hpp — the one path by which hook state reaches checkpoints.
//
// Every component (the trainer, a runner, a runner of yours) persists its hooks the
// same way, static and runtime (`any_hook`) alike:
//
//   hooks.<component>.<state key>    a stateful hook's state_dict()
//   events.<component>.<state key>   an event filter's counts, as {"counts": [int...]}
//
// and a runner with state_dict() / load_state_dict() its own state under "<component>":
//
//   hookforge::checkpoint_writer out;
//   hookforge::save_component(out, "training_runner", runner);   // runner state + its hooks
//   out.save(path);
//   hookforge::load_component(hookforge::checkpoint_reader(path), "training_runner", runner);
//
// Loading is all or nothing: every section is read and checked before anything changes
// (`load_plan`), and if applying one state throws, the states already applied are put
// back. Every load error is a checkpoint_error naming the file and the section.
#pragma once

#include <any>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// The section of a stateful hook's state.
HOOKFORGE_INLINE std::string hook_state_section(std::string_view component, std::string_view key);

/// The section of an event filter's counts.
HOOKFORGE_INLINE std::string hook_counts_section(std::string_view component, std::string_view key);

/// One persistent hook of a component, static or runtime, seen the same way: what it
/// saves and how it takes it back. Valid while the hook pack it was taken from lives.
struct persistent_hook {
  std::string section;  ///< where its state goes ("hooks.…" or "events.…")
  bool counts;          ///< an event filter's counts (else a state_dict)
  std::function<state_map()> save;
  std::function<void(const state_map&)> load;
};

namespace detail {

/// {"counts": counts}: an event filter's section.
HOOKFORGE_INLINE state_map counts_state(const std::vector<std::int64_t>& counts);

/// The counts of an event filter's section; throws std::invalid_argument when it has none.
HOOKFORGE_INLINE std::vector<std::int64_t> counts_of(const state_map& state);

/// Throws the error for a runtime hook whose state is not a hookforge::state_map.
[[noreturn]] HOOKFORGE_INLINE void throw_not_a_state_map(std::string_view key,
                                                         std::string_view section);

/// persistent_hooks' runtime part: type-erased already, so compiled once, not per pack.
HOOKFORGE_INLINE void append_runtime_persistent_hooks(std::vector<persistent_hook>& out,
                                                      std::span<const runtime_counts> counted,
                                                      std::span<const runtime_state> states,
                                                      std::string_view component);

}  // namespace detail

/// Every persistent hook of `pack` (a runner's hooks()), filter counts first, then
/// states; static hooks in attach order, then runtime ones in attach order.
template <class Pack>
std::vector<persistent_hook> persistent_hooks(Pack& pack, std::string_view component) {
  std::vector<persistent_hook> out;
  pack.for_each_counted([&](std::string_view key, auto& hook) {
    out.push_back({hook_counts_section(component, key), true,
                   [&hook] { return detail::counts_state(hook.event_counts()); },
                   [&hook](const state_map& s) { hook.set_event_counts(detail::counts_of(s)); }});
  });
  pack.for_each_stateful([&](std::string_view key, auto& hook) {
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(hook.state_dict())>, state_map>,
                  "hookforge: a stateful hook must return hookforge::state_map from state_dict() "
                  "for its state to go into checkpoints");
    out.push_back({hook_state_section(component, key), false, [&hook] { return hook.state_dict(); },
                   [&hook](const state_map& s) { hook.load_state_dict(s); }});
  });
  if constexpr (requires { pack.runtime(); })
    detail::append_runtime_persistent_hooks(out, pack.runtime().counted(), pack.runtime().states(),
                                            component);
  return out;
}

/// Reading a checkpoint into live objects in two phases: `read…` and `add` only read
/// and check sections; `apply()` then changes the objects, in the order added, and if
/// one step throws, undoes the steps already taken (newest first) and rethrows. Every
/// error is a checkpoint_error naming the file and, where there is one, the section.
class load_plan {
 public:
  explicit load_plan(const checkpoint_reader& in) : in_(&in) {}

  const checkpoint_reader& reader() const { return *in_; }

  /// A state section, read now. Its keys must include `required` (checked now).
  state_map read(const std::string& section,
                 std::initializer_list<std::string_view> required = {}) const;

  /// Apply `state`, read from `section`, with `load`; undo with `save`'s state from before.
  void add_state(std::string section, state_map state, std::function<state_map()> save,
                 std::function<void(const state_map&)> load);

  /// A component's own state, from `section`: state_dict() now for the undo,
  /// load_state_dict() when applied.
  template <class C>
  void add_component_state(const std::string& section, C& component) {
    add_state(
        section, read(section), [&component] { return component.state_dict(); },
        [&component](const state_map& s) { component.load_state_dict(s); });
  }

  /// Every persistent hook of `pack` (see persistent_hooks), each section read now.
  template <class Pack>
  void add_hooks(Pack& pack, std::string_view component) {
    for (auto& hook : persistent_hooks(pack, component)) {
      auto state = read(hook.section);
      if (hook.counts) check(hook.section, [&] { detail::counts_of(state); });
      add_state(hook.section, std::move(state), std::move(hook.save), std::move(hook.load));
    }
  }

  /// Any other step, with the action that reverses it (empty: the step is last to fail).
  void add_step(std::string section, std::function<void()> apply, std::function<void()> undo = {});

  void apply();

  [[noreturn]] void fail(const std::string& section, const std::string& message) const;

 private:
  struct step {
    std::string section;
    std::function<void()> apply;
    std::function<void()> undo;
  };

  // Runs `body`, turning any error that does not yet name the file into one that does.
  template <class F>
  void check(const std::string& section, F&& body) const {
    try {
      body();
    } catch (const checkpoint_error&) {
      throw;
    } catch (const std::exception& e) {
      fail(section, e.what());
    }
  }

  const checkpoint_reader* in_;
  std::vector<step> steps_;
};

/// Where save_hooks and save_component put sections: a checkpoint_writer, or anything
/// else with add_state(section, state) (the Trainer gathers its sections this way and
/// writes them with one compiled function).
template <class Out>
concept state_sink = requires(Out& out, const std::string& section, const state_map& state) {
  out.add_state(section, state);
};

/// Save every persistent hook of `pack` under `component`.
template <state_sink Out, class Pack>
void save_hooks(Out& out, std::string_view component, Pack& pack) {
  for (const auto& hook : persistent_hooks(pack, component))
    out.add_state(hook.section, hook.save());
}

/// Restore what save_hooks wrote; all or nothing.
template <class Pack>
void load_hooks(const checkpoint_reader& in, std::string_view component, Pack& pack) {
  load_plan plan(in);
  plan.add_hooks(pack, component);
  plan.apply();
}

/// A component's own state (when it has state_dict()) under "<name>", and its hooks.
template <state_sink Out, class C>
  requires requires(C& c) { c.hooks(); }
void save_component(Out& out, const std::string& name, C& component) {
  if constexpr (requires { component.state_dict(); }) out.add_state(name, component.state_dict());
  save_hooks(out, name, component.hooks());
}

/// Add the steps that restore what save_component wrote to `plan`.
template <class C>
  requires requires(C& c) { c.hooks(); }
void plan_component(load_plan& plan, const std::string& name, C& component) {
  if constexpr (requires { component.load_state_dict(state_map{}); })
    plan.add_component_state(name, component);
  plan.add_hooks(component.hooks(), name);
}

/// Restore what save_component wrote; all or nothing.
template <class C>
  requires requires(C& c) { c.hooks(); }
void load_component(const checkpoint_reader& in, const std::string& name, C& component) {
  load_plan plan(in);
  plan_component(plan, name, component);
  plan.apply();
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/persistence-inl.hpp"
#endif
