// hookforge/core/wrappers/filter.hpp — event filters: fire a hook (or one handler) only on some
// events.
//
//   hookforge::when(LossLogger{}, hookforge::every(100))                 // events 100, 200, ...
//   hookforge::when(Banner{}, hookforge::once(1))                        // the first event only
//   hookforge::when(Probe{}, hookforge::every(10), hookforge::after(50)) // 60, 70, ...
//   hookforge::when<"log_grad_norm">(logger, hookforge::every(10))     // one handler only
//
// Semantics follow Ignite's event filters. Each handler counts the events it
// receives, starting at 1; with count e the handler runs when
//   every(n):   e % n == 0          once(n...): e is one of n...
//   before(n):  e < n               after(n):   e > n
// every/before/after combine (all must hold); once stands alone. Giving a
// kind twice, or once() with another kind, is an error: a compile error here,
// an exception from `event_filter::make` (the runtime, config-driven path).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge {

struct every_t {
  std::int64_t n;
};
struct once_t {
  std::vector<std::int64_t> at;
};
struct before_t {
  std::int64_t n;
};
struct after_t {
  std::int64_t n;
};

inline every_t every(std::int64_t n) { return {n}; }
template <std::convertible_to<std::int64_t>... N>
once_t once(std::int64_t first, N... more) {
  return {{first, static_cast<std::int64_t>(more)...}};
}
inline before_t before(std::int64_t n) { return {n}; }
inline after_t after(std::int64_t n) { return {n}; }

namespace detail {

inline constexpr const char* filter_twice_message =
    "hookforge::when: each filter kind (every, once, before, after) may be given only once";
inline constexpr const char* filter_once_mixed_message =
    "hookforge::when: once() cannot be combined with every(), before() or after()";

constexpr bool filter_kinds_unique(int n_every, int n_once, int n_before, int n_after) {
  return n_every <= 1 && n_once <= 1 && n_before <= 1 && n_after <= 1;
}
constexpr bool filter_once_alone(int n_every, int n_once, int n_before, int n_after) {
  return n_once == 0 || n_every + n_before + n_after == 0;
}

}  // namespace detail

/// A validated combination of filters; `passes(e)` says whether event e fires.
class event_filter {
 public:
  /// Combine filters given at run time (a config's `every:`, `once:` ...).
  /// Throws std::invalid_argument on a combination Ignite rejects or a bad value.
  static event_filter make(std::optional<std::int64_t> every_n, std::vector<std::int64_t> once_at,
                           std::optional<std::int64_t> before_n,
                           std::optional<std::int64_t> after_n) {
    const int e = every_n.has_value(), o = !once_at.empty(), b = before_n.has_value(),
              a = after_n.has_value();
    if (!detail::filter_once_alone(e, o, b, a))
      throw std::invalid_argument(detail::filter_once_mixed_message);
    if (every_n && *every_n <= 0)
      throw std::invalid_argument("hookforge::every(n): n must be positive, got " +
                                  std::to_string(*every_n));
    for (auto n : once_at)
      if (n <= 0)
        throw std::invalid_argument("hookforge::once(n): n must be positive, got " +
                                    std::to_string(n));
    event_filter f;
    f.every_ = every_n.value_or(0);
    f.once_ = std::move(once_at);
    f.before_ = before_n;
    f.after_ = after_n;
    return f;
  }

  bool passes(std::int64_t event) const {
    if (!once_.empty()) {
      for (auto n : once_)
        if (n == event) return true;
      return false;
    }
    if (every_ > 0 && event % every_ != 0) return false;
    if (before_ && !(event < *before_)) return false;
    if (after_ && !(event > *after_)) return false;
    return true;
  }

 private:
  std::int64_t every_ = 0;
  std::vector<std::int64_t> once_;
  std::optional<std::int64_t> before_, after_;
};

namespace detail {

template <class... F>
event_filter combine_filters(F... filters) {
  constexpr int e = (std::is_same_v<F, every_t> + ... + 0);
  constexpr int o = (std::is_same_v<F, once_t> + ... + 0);
  constexpr int b = (std::is_same_v<F, before_t> + ... + 0);
  constexpr int a = (std::is_same_v<F, after_t> + ... + 0);
  static_assert(e + o + b + a == sizeof...(F),
                "hookforge::when: filters are every(n), once(n...), before(n) and after(n)");
  static_assert(
      filter_kinds_unique(e, o, b, a),
      "hookforge::when: each filter kind (every, once, before, after) may be given only once");
  static_assert(filter_once_alone(e, o, b, a),
                "hookforge::when: once() cannot be combined with every(), before() or after()");
  std::optional<std::int64_t> every_n, before_n, after_n;
  std::vector<std::int64_t> once_at;
  auto take = [&](const auto& f) {
    using T = std::remove_cvref_t<decltype(f)>;
    if constexpr (std::is_same_v<T, every_t>) every_n = f.n;
    if constexpr (std::is_same_v<T, once_t>) once_at = f.at;
    if constexpr (std::is_same_v<T, before_t>) before_n = f.n;
    if constexpr (std::is_same_v<T, after_t>) after_n = f.n;
  };
  (take(filters), ...);
  return event_filter::make(every_n, std::move(once_at), before_n, after_n);
}

/// Counts the calls of binding J and runs it when the filter passes (with the point
/// tag when given one).
template <std::size_t J, class Invoker>
struct filtered_invoker {
  template <class W, class Ctx, class... Point>
  auto operator()(W& wrapper, Ctx& ctx, Point... point) const
      -> decltype(void(Invoker{}(wrapper.inner(), ctx, point...))) {
    if (wrapper.admit(J)) Invoker{}(wrapper.inner(), ctx, point...);
  }
};

template <fixed_string Method, std::size_t J, class B>
struct filtered_binding;
template <fixed_string Method, std::size_t J, fixed_string M, class Inv, class... P>
struct filtered_binding<Method, J, binding<M, Inv, P...>> {
  static constexpr bool applies = Method.view().empty() || Method.view() == M.view();
  using type =
      binding<M, std::conditional_t<applies, filtered_invoker<J, Inv>, via_inner<Inv>>, P...>;
};

template <fixed_string Method, class List, class Seq>
struct filtered_tuple;
template <fixed_string Method, class... B, std::size_t... J>
struct filtered_tuple<Method, type_list<B...>, std::index_sequence<J...>> {
  static constexpr auto value =
      hookforge::bindings(typename filtered_binding<Method, J, B>::type{}...);
};

}  // namespace detail

/// A hook whose handlers (or the handler `Method`, when given) run only on the
/// events the filter admits.
template <class H, fixed_string Method = "">
class filtered_hook : public detail::wrapper_base<H> {
  using list = bindings_of<H>;

 public:
  static constexpr auto bindings =
      detail::filtered_tuple<Method, list, std::make_index_sequence<list::size>>::value;
  /// The filter counts events on the host: a replayed graph would skip the count.
  static constexpr bool capture_safe = false;

  filtered_hook(H hook, event_filter filter)
      : detail::wrapper_base<H>(std::move(hook)), filter_(std::move(filter)) {}

  /// Count one more event for binding j; true when it should run.
  bool admit(std::size_t j) { return filter_.passes(++counts_[j]); }

  /// The events counted so far, one per binding (saved in checkpoints).
  std::vector<std::int64_t> event_counts() const { return {counts_.begin(), counts_.end()}; }
  void set_event_counts(const std::vector<std::int64_t>& counts) {
    if (counts.size() != counts_.size())
      throw std::invalid_argument("hookforge::when: " + std::to_string(counts.size()) +
                                  " event counts given for a hook with " +
                                  std::to_string(counts_.size()) + " handlers");
    std::copy(counts.begin(), counts.end(), counts_.begin());
  }

 private:
  event_filter filter_;
  std::array<std::int64_t, list::size> counts_{};
};

/// Filter every handler of `hook`.
template <class H, class... F>
filtered_hook<H> when(H hook, F... filters) {
  return filtered_hook<H>(std::move(hook), detail::combine_filters(std::move(filters)...));
}

/// Filter only the handler `Method` of `hook`.
template <fixed_string Method, class H, class... F>
filtered_hook<H, Method> when(H hook, F... filters) {
  static_assert(detail::has_handler_named<H, Method>(),
                "hookforge::when: the hook has no handler with this method name");
  return filtered_hook<H, Method>(std::move(hook), detail::combine_filters(std::move(filters)...));
}

}  // namespace hookforge
