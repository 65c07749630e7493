// hookforge/config/hooks.hpp — hooks in a config: the hook kind, its entry keys, and the
// hook lists of components.
//
//   hooks:
//     - _target: Counter                   # a registered hook
//       params: {start: 1}
//       priority: HIGH                     # a level name, or 0-100 (lower runs first)
//       bindings: {count: on_post_step}    # method -> point | [points] | null (disabled)
//       every: 10                          # event filters: every, once, before, after
//       key: counter_a                     # the state key, when two share a class
//       rank_zero_only: true               # data-parallel runs: act on rank 0 only
//     - ${ref:hooks.shared}                # one instance, attached here and elsewhere
//
// `bindings` may also sit in `params` (SR-Forge's place for it). A hook class is
// registered for the contexts it may be attached with: `hook_kind<Ctx...>` is the kind
// tag (the torch layer declares `kinds::hook` for its runners' contexts), and
// HOOKFORGE_HOOK_CONTEXTS(Type, Ctx...) adds contexts to a registered class, e.g. for
// a runner of yours. A component reads its hooks as a `hook_list<Runner>`: each entry
// becomes an `any_hook<Runner::Ctx>` and is checked against the runner's points before
// anything runs — a handler that cannot take it, or a config-written point name that is no
// point of the runner (reported with the closest names, by core/runtime/runtime_hooks.hpp's
// rule) is a config_error; a hook none of whose handlers can fire there — they match no
// point of the runner, or the hook is not registered for the runner's context — gets
// SR-Forge's wrong-target warning with its location and is left out (an error with
// build_options::strict).
//
// Ranks. In a data-parallel run every rank builds the same config (build_options::rank
// says which it is). A hook with side effects (files, console, checkpoints, plots) should
// act once: a class marked with HOOKFORGE_RANK_ZERO_ONLY(Type) (the torch layer marks its
// writers) is, by default, attached on rank 0 as written and on the other ranks with every
// handler disabled — checked the same way, with the same state key, so binding checks and
// checkpoint layouts agree on every rank. An entry's `rank_zero_only: true|false`
// overrides its class's default.
#pragma once

#include <any>
#include <charconv>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/convert.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/keys.hpp"
#include "hookforge/config/register.hpp"
#include "hookforge/core/binding.hpp"
#include "hookforge/core/fields.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runner.hpp"
#include "hookforge/core/runtime/any_hook.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/core/type_name.hpp"
#include "hookforge/core/wrappers/filter.hpp"
#include "hookforge/core/wrappers/gate.hpp"
#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge::config {

/// A priority as a config writes it: a level name (HIGH) or an integer in [0, 100].
struct priority_level {
  int value = priority::NORMAL;
};

template <>
struct value_traits<priority_level> {
  static std::vector<std::string_view> names() {
    std::vector<std::string_view> out;
    for (const auto& l : priority::levels) out.push_back(l.name);
    return out;
  }
  static std::string expected() {
    return fmt::format("a priority level ({}) or an integer in [{}, {}]",
                       hookforge::join_names(names(), ", "), priority::HIGHEST, priority::LOWEST);
  }
  template <class B>
  static priority_level read(B&, const value& v) {
    if (!v.is_scalar() || v.is_reference()) detail::wrong(v, expected());
    const auto& s = v.scalar();
    if (auto level = priority::from_name(s)) return {*level};
    bool numeric = !s.empty() && !v.quoted();
    for (std::size_t i = 0; i < s.size(); ++i)
      numeric =
          numeric && ((s[i] >= '0' && s[i] <= '9') || (i == 0 && (s[i] == '-' || s[i] == '+')));
    if (numeric) {
      int n = 0;
      auto [end, ec] = std::from_chars(s.data() + (s[0] == '+'), s.data() + s.size(), n);
      if (ec == std::errc{} && end == s.data() + s.size() && priority::in_range(n)) return {n};
      detail::wrong(v, expected());
    }
    auto candidates = names();
    throw config_error(v.where(), v.key(), expected(), v.describe(),
                       detail::closest_note(s, std::span<const std::string_view>(candidates)));
  }
};

class hook_handle;
template <>
struct kind_traits<hook_handle>;

namespace detail {

/// A hook held by a shared pointer, as a hook: what an event filter wraps, so a filtered
/// instance is still the one object every ${ref} shares.
template <class H>
class shared_hook : public hookforge::detail::wrapper_base<H, /*ByReference=*/true> {
 public:
  explicit shared_hook(std::shared_ptr<H> hook)
      : hookforge::detail::wrapper_base<H, true>(*hook), keep_(std::move(hook)) {}

 private:
  std::shared_ptr<H> keep_;
};

/// The hook `object` (an H) in a gated_hook that never runs: distributed::rank_zero_only's policy,
/// so bindings, priority and state key stay as on rank 0.
template <class H>
std::shared_ptr<void> silenced(std::shared_ptr<void> object) {
  return std::make_shared<gated_hook<shared_hook<H>>>(
      shared_hook<H>(std::static_pointer_cast<H>(std::move(object))),
      /*enabled=*/false);
}

template <class Ctx>
using hook_eraser = any_hook<Ctx> (*)(const std::shared_ptr<void>&, const hook_options&);

template <class H, class Ctx>
any_hook<Ctx> erase_hook(const std::shared_ptr<void>& object, const hook_options& options) {
  return any_hook<Ctx>(std::static_pointer_cast<H>(object), options);
}

/// What the config layer knows of one registered hook class.
struct hook_type {
  std::string name;
  std::vector<std::string> methods;   ///< its handlers
  std::vector<std::string> contexts;  ///< the contexts it was registered for, as named
  /// context -> hook_eraser<Ctx>: the hook as built, with its event filter, and each of
  /// the two gated (rank_zero_only on a rank but 0)
  std::map<std::type_index, std::any> plain, filtered, gated_plain, gated_filtered;
  std::shared_ptr<void> (*filter)(std::shared_ptr<void>, event_filter) = nullptr;
  /// The object (filtered or not) in a gated_hook that never runs.
  std::shared_ptr<void> (*silence)(std::shared_ptr<void>, bool filtered) = nullptr;
  bool rank_zero_only = false;  ///< the class's default for `rank_zero_only:`
};

template <class H>
hook_type& hook_type_of() {
  static hook_type type = [] {
    hook_type t;
    t.name = std::string(hook_name<H>());
    for (const auto& mp : list_bindings<H>()) {
      bool seen = false;
      for (const auto& m : t.methods) seen = seen || m == mp.method;
      if (!seen) t.methods.emplace_back(mp.method);
    }
    t.filter = [](std::shared_ptr<void> object, event_filter f) -> std::shared_ptr<void> {
      return std::make_shared<filtered_hook<shared_hook<H>>>(
          shared_hook<H>(std::static_pointer_cast<H>(object)), std::move(f));
    };
    t.silence = [](std::shared_ptr<void> object, bool filtered) -> std::shared_ptr<void> {
      if (filtered) return silenced<filtered_hook<shared_hook<H>>>(std::move(object));
      return silenced<H>(std::move(object));
    };
    return t;
  }();
  return type;
}

}  // namespace detail

/// Let a config attach hook class H to components whose context is one of Ctx...
template <class H, class... Ctx>
void register_hook_contexts() {
  static_assert(
      has_bindings<H>,
      "hookforge::config: only hooks (classes with `static constexpr auto bindings`) can be "
      "registered as hooks");
  if constexpr (has_bindings<H>) {  // else the assertion above is the one message
    auto& type = detail::hook_type_of<H>();
    auto add = [&]<class C>() {
      if (!type.plain.emplace(typeid(C), detail::hook_eraser<C>(&detail::erase_hook<H, C>)).second)
        return;
      using shared = detail::shared_hook<H>;
      using filtered = filtered_hook<shared>;
      type.filtered.emplace(typeid(C), detail::hook_eraser<C>(&detail::erase_hook<filtered, C>));
      type.gated_plain.emplace(typeid(C),
                               detail::hook_eraser<C>(&detail::erase_hook<gated_hook<shared>, C>));
      type.gated_filtered.emplace(
          typeid(C), detail::hook_eraser<C>(
                         &detail::erase_hook<gated_hook<detail::shared_hook<filtered>>, C>));
      type.contexts.emplace_back(type_name<C>());
    };
    (add.template operator()<Ctx>(), ...);
  }
}

/// Make rank_zero_only the default of hook class H's entries (see the top of this header).
template <class H>
void mark_rank_zero_only() {
  detail::hook_type_of<H>().rank_zero_only = true;
}

/// The kind tag of hooks attachable to components whose context is one of Ctx...
/// (`namespace hookforge::config::kinds { using my_hook = hook_kind<MyCtx>; }`).
template <class... Ctx>
struct hook_kind {
  using handle = hook_handle;
  template <class T>
  static void on_register() {
    register_hook_contexts<T, Ctx...>();
  }
};

/// A hook built from a config entry: the instance (shared by every ${ref} to the entry)
/// and what the entry says about it. A component turns it into an any_hook of its context.
class hook_handle {
 public:
  std::string_view name() const {
    return type_ ? std::string_view(type_->name) : std::string_view{};
  }
  const hook_options& options() const { return options_; }
  /// The hook object (its event filter wrapper when the entry has filters).
  const std::shared_ptr<void>& object() const { return object_; }
  const location& where() const { return where_; }
  const std::string& key() const { return key_; }

  /// This hook as an any_hook for `component` (whose points are `points`, of which it
  /// records `captured` in a CUDA graph), checked: see the top of this header. `use`/`use_key`
  /// is where the component lists it. Nothing when none of its handlers can fire there
  /// (SR-Forge's wrong-target warning).
  template <class Ctx>
  std::optional<any_hook<Ctx>> for_component(std::string_view component,
                                             std::span<const std::string_view> points,
                                             std::span<const std::string_view> captured,
                                             bool strict, const location& use,
                                             const std::string& use_key) const {
    const auto& erasers = filtered_ ? type_->filtered : type_->plain;
    auto it = erasers.find(typeid(Ctx));
    if (it == erasers.end()) {
      // Not registered for this context: none of its handlers can fire here, the case a
      // hook with no matching point is; one answer for both.
      const std::string contexts = type_->contexts.empty()
                                       ? std::string("no context")
                                       : hookforge::join_names(type_->contexts, ", ");
      if (strict)
        throw config_error(use, use_key,
                           fmt::format("a hook registered for the context of {} ({})", component,
                                       type_name<Ctx>()),
                           fmt::format("{}, registered for {}",
                                       use_key == key_ ? fmt::format("hook {}", name())
                                                       : fmt::format("hook {} ({})", name(), key_),
                                       contexts),
                           "register it for that context with HOOKFORGE_HOOK_CONTEXTS");
      warn(fmt::format(
          "{}:{}:{}: {}: Hook {} is registered for {}, but {} runs with {}: none of its handlers "
          "can fire there, so it is left out. Was this hook attached to the wrong target? "
          "(Register "
          "it for that context with HOOKFORGE_HOOK_CONTEXTS.)",
          use.file, use.line, use.column, use_key, name(), contexts, component, type_name<Ctx>()));
      return std::nullopt;
    }
    auto erase = std::any_cast<detail::hook_eraser<Ctx>>(it->second);
    std::optional<any_hook<Ctx>> hook;
    try {
      hook.emplace(erase(object_, options_));
    } catch (const binding_error& e) {
      throw config_error(use, use_key, "options the hook accepts", e.what());
    }
    auto plan = hookforge::detail::plan_bindings(hook->erased(), points, component, captured);
    if (!plan.error.empty()) {
      const auto* origin = origin_of(plan.error_method);
      throw config_error(origin ? origin->where : use, origin ? origin->key : use_key,
                         fmt::format("a hook whose handlers {} can call", component), plan.error);
    }
    for (const auto* issues : {&plan.unknown, &plan.near_misses})
      for (const auto& issue : *issues)
        if (const auto* origin = origin_of(issue.method); origin && origin->written(issue.point))
          throw config_error(origin->where, origin->key,
                             fmt::format("a point of {} ({}) or a built-in point", component,
                                         hookforge::join_names(points, ", ")),
                             detail::quote(issue.point), detail::closest_note(issue.point, points));
    for (const auto& text : plan.reports(name(), component)) {
      if (strict)
        throw config_error(use, use_key,
                           fmt::format("a hook that binds to points of {}", component), text);
      warn(fmt::format("{}:{}:{}: {}: {}", use.file, use.line, use.column, use_key, text));
    }
    if (silenced_) {
      // Checked as written above; attached gated off (a rank but 0), bindings as on rank 0.
      const auto& gated = filtered_ ? type_->gated_filtered : type_->gated_plain;
      auto erase_gated = std::any_cast<detail::hook_eraser<Ctx>>(gated.at(typeid(Ctx)));
      return erase_gated(type_->silence(object_, filtered_), options_);
    }
    return std::move(*hook);
  }

  /// Whether this hook acts on rank 0 only (its entry's rank_zero_only, or its class's default).
  bool rank_zero_only() const { return rank_zero_only_; }

  /// The hook itself when it is an H (whatever filter wraps it), else nullptr: what a
  /// program asks of the hooks it was given (hookforge-run: the CheckpointSaver's folder).
  template <class H>
  std::shared_ptr<H> instance_of() const {
    if (type_ != &detail::hook_type_of<H>()) return nullptr;
    return std::static_pointer_cast<H>(instance_);
  }

 private:
  friend struct kind_traits<hook_handle>;

  /// Where the config rebinds one method (its `bindings` entry).
  struct binding_origin {
    std::string method;
    std::vector<std::string> points;
    location where;
    std::string key;
    bool written(std::string_view point) const {
      for (const auto& p : points)
        if (p == point) return true;
      return false;
    }
  };
  const binding_origin* origin_of(std::string_view method) const {
    for (const auto& o : origins_)
      if (o.method == method) return &o;
    return nullptr;
  }

  std::shared_ptr<void> object_;
  std::shared_ptr<void> instance_;  ///< the hook object, unwrapped
  const detail::hook_type* type_ = nullptr;
  bool filtered_ = false;
  bool rank_zero_only_ = false;
  bool silenced_ = false;  ///< rank_zero_only on a rank other than 0: attached disabled
  hook_options options_;
  location where_;
  std::string key_;
  std::vector<binding_origin> origins_;
};

/// What builder::named_references notes for each batch field a hook's handler declares it
/// reads or writes (core/fields.hpp), with the points it is bound to in its entry: the run
/// follows them (run/field_flow.hpp).
inline constexpr std::string_view handler_reads_field = "a field a hook's handler reads";
inline constexpr std::string_view handler_writes_field = "a field a hook's handler writes";

template <>
struct kind_traits<hook_handle> {
  static constexpr std::string_view name = "hook";
  static constexpr std::string_view entry_keys[] = {
      "priority", "bindings", "key", "every", "once", "before", "after", "rank_zero_only"};
  static constexpr std::string_view reserved_params[] = {"bindings"};

  template <class T>
  static hook_handle wrap(builder& b, const value& entry, const std::optional<value>& params,
                          std::shared_ptr<T> object) {
    hook_handle h;
    h.type_ = &detail::hook_type_of<T>();
    h.where_ = entry.where();
    h.key_ = entry.key();
    if (auto p = entry.find("priority")) h.options_.priority = b.read<priority_level>(*p).value;
    if (auto k = entry.find("key")) h.options_.key = b.read<std::string>(*k);
    h.rank_zero_only_ = h.type_->rank_zero_only;
    if (auto r = entry.find("rank_zero_only")) h.rank_zero_only_ = b.read<bool>(*r);
    h.silenced_ = h.rank_zero_only_ && b.options().rank != 0;
    read_bindings(b, entry, params, h);
    note_fields<T>(b, entry, h);
    h.instance_ = object;
    h.object_ = std::move(object);
    if (auto filter = read_filter(b, entry)) {
      h.object_ = h.type_->filter(std::move(h.object_), std::move(*filter));
      h.filtered_ = true;
      // A filter's event counts are saved under the hook's state key; for a class with no
      // state of its own the entry's key path names them, so two filtered instances of
      // one class can share a component.
      if (h.options_.key.empty() && !stateful<T>) h.options_.key = entry.key();
    }
    return h;
  }

 private:
  /// The fields T's handlers declare, noted with each handler's points here (its entry's
  /// `bindings:` where given, else its own).
  template <class T>
  static void note_fields(builder& b, const value& entry, const hook_handle& h) {
    for (const auto& use : field_use_of<T>()) {
      std::vector<std::string> points;
      if (auto it = h.options_.bindings.find(use.method); it != h.options_.bindings.end())
        points = it->second;
      else
        for (const auto& mp : list_bindings<T>())
          if (mp.method == use.method) points.emplace_back(mp.point);
      const auto reader = fmt::format("{}::{}", h.type_->name, use.method);
      for (auto [what, fields] : {std::pair{handler_reads_field, &use.reads},
                                  std::pair{handler_writes_field, &use.writes}})
        for (auto field : *fields)
          b.note_name({std::string(what), std::string(field), entry.where(), entry.key(), true,
                       reader, points});
    }
  }

  static void read_bindings(builder& b, const value& entry, const std::optional<value>& params,
                            hook_handle& h) {
    auto beside = entry.find("bindings");
    auto inside = params ? params->find("bindings") : std::nullopt;
    if (beside && inside)
      throw config_error(
          inside->where(), inside->key(), "bindings given once (beside _target, or in params)",
          fmt::format("a second bindings (the first at line {})", beside->where().line));
    if (!beside && !inside) return;
    value map = b.doc().resolve(beside ? *beside : *inside);
    if (map.is_null()) return;
    if (!map.is_map())
      throw config_error(map.where(), map.key(), "a mapping of method: point | [points] | null",
                         map.describe());
    const auto& methods = h.type_->methods;
    check_keys(map, known_keys{.what = fmt::format("a handler of {}", h.type_->name),
                               .names = {methods.begin(), methods.end()}});
    for (const auto& item : map.items()) {
      value target = b.doc().resolve(item.val);
      std::vector<std::string> points;
      if (target.is_null()) {
        // disabled
      } else if (target.is_sequence()) {
        for (const auto& e : target.elements()) points.push_back(read_point(b, e));
      } else {
        points.push_back(read_point(b, target));
      }
      h.options_.bindings[item.name] = points;
      h.origins_.push_back({item.name, points, target.where(), target.key()});
    }
  }

  static std::string read_point(builder& b, const value& v) {
    value p = b.doc().resolve(v);
    if (!p.is_scalar() || p.is_reference() || p.scalar().empty())
      throw config_error(p.where(), p.key(), "a point name (on_post_step ...)", p.describe());
    return p.scalar();
  }

  static std::optional<event_filter> read_filter(builder& b, const value& entry) {
    auto every = entry.find("every"), once = entry.find("once"), before = entry.find("before"),
         after = entry.find("after");
    if (!every && !once && !before && !after) return std::nullopt;
    auto positive = [&](const value& v) {
      auto n = b.read<std::int64_t>(v);
      if (n <= 0) throw config_error(v.where(), v.key(), "a positive integer", v.describe());
      return n;
    };
    std::optional<std::int64_t> every_n, before_n, after_n;
    std::vector<std::int64_t> once_at;
    if (every) every_n = positive(*every);
    if (before) before_n = b.read<std::int64_t>(*before);
    if (after) after_n = b.read<std::int64_t>(*after);
    if (once) {
      value o = b.doc().resolve(*once);
      if (o.is_sequence()) {
        for (const auto& e : o.elements()) once_at.push_back(positive(e));
        if (once_at.empty())
          throw config_error(o.where(), o.key(), "one event number or more", "an empty list");
      } else {
        once_at.push_back(positive(o));
      }
      if (every || before || after) {
        std::vector<std::string_view> others;
        if (every) others.push_back("every");
        if (before) others.push_back("before");
        if (after) others.push_back("after");
        throw config_error(once->where(), once->key(),
                           "once alone (Ignite's rule: not with every, before or after)",
                           fmt::format("once with {}", hookforge::join_names(others, ", ")));
      }
    }
    try {
      return event_filter::make(every_n, std::move(once_at), before_n, after_n);
    } catch (const std::invalid_argument& e) {
      throw config_error(entry.where(), entry.key(), "a valid event filter", e.what());
    }
  }
};

/// The hooks a component lists, each an any_hook of its context, checked against its
/// points when read (a parameter type: `arg<hook_list<MyRunner>>("hooks", {})`).
template <class Runner>
struct hook_list {
  using context = context_of<Runner>;
  struct item {
    any_hook<context> hook;
    location where;
    std::string key;
    hook_handle built;  ///< what the entry built
  };
  std::vector<item> items;

  std::size_t size() const { return items.size(); }
  bool empty() const { return items.empty(); }

  /// The listed hooks that are H, in order (hook_handle::instance_of).
  template <class H>
  std::vector<std::shared_ptr<H>> instances_of() const {
    std::vector<std::shared_ptr<H>> found;
    for (const auto& i : items)
      if (auto h = i.built.template instance_of<H>()) found.push_back(std::move(h));
    return found;
  }
};

template <class Runner>
struct value_traits<hook_list<Runner>> {
  static std::string expected() {
    return fmt::format("a list of hooks for {}", runner_name<Runner>());
  }
  template <class B>
  static hook_list<Runner> read(B& b, const value& v) {
    hook_list<Runner> out;
    if (v.is_null()) return out;
    if (!v.is_sequence()) detail::wrong(v, expected());
    for (const auto& e : v.elements()) {
      auto handle = b.template build<hook_handle>(e);
      auto hook = handle.template for_component<context_of<Runner>>(
          runner_name<Runner>(), points_of<Runner>::names, captured_points_of<Runner>::names,
          b.options().strict, e.where(), e.key());
      if (hook) out.items.push_back({std::move(*hook), e.where(), e.key(), std::move(handle)});
    }
    return out;
  }
};

/// Attach every hook of `list` to `pack` (a runner's hooks(), with runtime_hooks among
/// them). The list was checked when read, and its warnings reported with their
/// locations, so attaching stays quiet; a clash of state keys is a config_error.
template <class Pack, class Runner>
void attach_all(Pack& pack, const hook_list<Runner>& list) {
  capture_warnings quiet;
  for (const auto& item : list.items) {
    try {
      pack.attach(item.hook);
    } catch (const binding_error& e) {
      throw config_error(item.where, item.key,
                         fmt::format("a hook {} can attach", runner_name<Runner>()), e.what(),
                         "give one of them a `key:`");
    }
  }
}

}  // namespace hookforge::config

/// Let a config attach the registered hook class `Type` to components whose context is
/// one of `...` (a runner of yours). At namespace scope, in any translation unit.
#define HOOKFORGE_HOOK_CONTEXTS(Type, ...)                                            \
  [[maybe_unused]] static const bool HOOKFORGE_CONFIG_CAT(hookforge_config_contexts_, \
                                                          __COUNTER__) =              \
      (::hookforge::config::register_hook_contexts<Type, __VA_ARGS__>(), true)

/// Make the registered hook class `Type` act on rank 0 only by default in data-parallel
/// runs (an entry's `rank_zero_only: false` overrides it). At namespace scope.
#define HOOKFORGE_RANK_ZERO_ONLY(Type)                                                 \
  [[maybe_unused]] static const bool HOOKFORGE_CONFIG_CAT(hookforge_config_rank_zero_, \
                                                          __COUNTER__) =               \
      (::hookforge::config::mark_rank_zero_only<Type>(), true)
