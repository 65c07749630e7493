// hookforge/core/field_checks.hpp — the batch-field checks made when hooks are attached: the
// flow rule of core/fields.hpp, applied by hook_pack's constructor beside checks.hpp's.
//
// Per hook, detail::fields_report finds the first field a handler reads where the rule does
// not accept it; the checks (namespace check) take what it found as template arguments, so
// GCC prints them in the "with" line above the message, as checks.hpp's do. Nothing is worked
// out for a runner without batch_fields or a hook without fields.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/checks.hpp"  // detail::static_message, point_name, no_binding, first_true
#include "hookforge/core/fields.hpp"
#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/runner.hpp"

// As in checks.hpp: C++26 static_assert messages name the hook, field, point and runner.
#if defined(__cpp_static_assert) && __cpp_static_assert >= 202306L
#define HOOKFORGE_FIELDS_MESSAGES 1
#else
#define HOOKFORGE_FIELDS_MESSAGES 0
#endif

namespace hookforge {
namespace detail {

/// A field at one of a runner's points: held there by the batch, or written there.
struct placed_field {
  std::size_t position;  ///< index in the runner's hook_points
  std::string_view name;
};

template <class Runner, class BatchFields>
struct runner_fields_of {
  static constexpr bool declared = false;
  using foreign_point = void;
};
template <class Runner, class... At>
struct runner_fields_of<Runner, batch_fields<At...>> {
  using points = points_of<Runner>;
  static constexpr bool declared = true;
  /// Which points are checked; the last slot takes the points the runner lacks.
  static constexpr auto checked = [] {
    std::array<bool, points::size + 1> out{};
    ((out[points::template index_of<typename At::point_type>] = true), ...);
    return out;
  }();
  static constexpr auto provided = [] {
    std::array<placed_field, (At::names.size() + ... + 0)> out{};
    std::size_t i = 0;
    [[maybe_unused]] auto add = [&](std::size_t point, const auto& names) {
      for (auto name : names) out[i++] = {point, name};
    };
    (add(points::template index_of<typename At::point_type>, At::names), ...);
    return out;
  }();
  /// The first fields_at point that is not one of the runner's (void when none).
  using foreign_point =
      type_at_t<first_true({!points::template contains<typename At::point_type>...}),
                type_list<typename At::point_type..., void>>;
};

template <class Runner>
struct batch_fields_decl {
  using type = void;
};
template <class Runner>
  requires requires { typename Runner::batch_fields; }
struct batch_fields_decl<Runner> {
  using type = typename Runner::batch_fields;
};
/// What Runner's batch holds where (`declared` false: it does not say).
template <class Runner>
using runner_fields = runner_fields_of<Runner, typename batch_fields_decl<Runner>::type>;

/// Calls f(point, binding) for each of H's bindings and each of its points that Points has.
template <class Points, class H, class F>
constexpr void for_each_bound_point(F&& f) {
  std::size_t binding = 0;
  [&]<class... B>(type_list<B...>) {
    (
        [&]<class... Q>(point_list<Q...>) {
          for (std::size_t p :
               std::array<std::size_t, sizeof...(Q)>{Points::template index_of<Q>...})
            if (p < Points::size) f(p, binding, B::method);
          ++binding;
        }(typename B::points{}),
        ...);
  }(bindings_of<H>{});
}

/// Calls f(placed_field) for each field a handler of H writes, at each point it binds to.
template <class Points, class H, class F>
constexpr void for_each_write(F&& f) {
  if constexpr (declares_fields_v<H>) {
    constexpr auto& uses = field_uses_v<typename declared_fields<H>::owner>;
    for_each_bound_point<Points, H>([&](std::size_t p, std::size_t, std::string_view method) {
      for_each_field(uses, method, true, [&](std::string_view name) { f(placed_field{p, name}); });
    });
  }
}

/// Every field a handler of the pack writes, where.
template <class Points, class... Hooks>
constexpr auto pack_writes() {
  constexpr std::size_t size = [] {
    std::size_t n = 0;
    (for_each_write<Points, Hooks>([&](placed_field) { ++n; }), ...);
    return n;
  }();
  std::array<placed_field, size> out{};
  std::size_t i = 0;
  (for_each_write<Points, Hooks>([&](placed_field w) { out[i++] = w; }), ...);
  return out;
}
template <class Points, class... Hooks>
inline constexpr auto pack_writes_v = pack_writes<Points, Hooks...>();

/// Is `name` among `fields` at `point` (before it, when `before`)?
constexpr bool holds(std::span<const placed_field> fields, std::size_t point, std::string_view name,
                     bool before) {
  for (const auto& f : fields)
    if ((before ? f.position < point : f.position == point) && f.name == name) return true;
  return false;
}

/// A read the flow rule does not accept: H's binding number `binding` reads `field` at the
/// runner's point number `point`.
struct unprovided_read {
  bool found = false;
  std::size_t binding = 0;
  std::size_t point = 0;
  std::string_view field;
};

template <class Runner, class Hook, class... Hooks>
constexpr unprovided_read first_unprovided_read() {
  using table = runner_fields<Runner>;
  constexpr auto& uses = field_uses_v<typename declared_fields<Hook>::owner>;
  constexpr auto& written = pack_writes_v<points_of<Runner>, Hooks...>;
  unprovided_read out;
  for_each_bound_point<points_of<Runner>, Hook>([&](std::size_t p, std::size_t b, auto method) {
    if (table::checked[p])
      for_each_field(uses, method, false, [&](std::string_view name) {
        if (!out.found && !holds(table::provided, p, name, false) && !holds(written, p, name, true))
          out = {true, b, p, name};
      });
  });
  return out;
}

/// The fields present at the runner's point number `point`: the batch's, then those written
/// earlier, each once.
template <class Runner, std::size_t Point, class... Hooks>
constexpr auto present_names() {
  constexpr auto& provided = runner_fields<Runner>::provided;
  constexpr auto& written = pack_writes_v<points_of<Runner>, Hooks...>;
  constexpr auto for_each = [](auto&& f) {
    auto at = [&](std::size_t i) -> const placed_field& {
      return i < provided.size() ? provided[i] : written[i - provided.size()];
    };
    auto here = [&](std::size_t i) {
      return i < provided.size() ? at(i).position == Point : at(i).position < Point;
    };
    for (std::size_t i = 0; i < provided.size() + written.size(); ++i) {
      bool seen = !here(i);
      for (std::size_t j = 0; j < i && !seen; ++j) seen = here(j) && at(j).name == at(i).name;
      if (!seen) f(at(i).name);
    }
  };
  constexpr std::size_t size = [&] {
    std::size_t n = 0;
    for_each([&](std::string_view) { ++n; });
    return n;
  }();
  std::array<std::string_view, size> out{};
  std::size_t i = 0;
  for_each([&](std::string_view name) { out[i++] = name; });
  return out;
}
template <class Runner, std::size_t Point, class... Hooks>
inline constexpr auto present_names_v = present_names<Runner, Point, Hooks...>();

template <auto& Names, class I = std::make_index_sequence<Names.size()>>
struct as_field_list;
template <auto& Names, std::size_t... I>
struct as_field_list<Names, std::index_sequence<I...>> {
  using type = field_list<fixed_string<Names[I].size() + 1>(Names[I])...>;
};

template <bool Provided, class Runner, std::size_t Point, class... Hooks>
struct present_fields {
  using type = field_list<>;
};
template <class Runner, std::size_t Point, class... Hooks>
struct present_fields<false, Runner, Point, Hooks...> {
  using type = typename as_field_list<present_names_v<Runner, Point, Hooks...>>::type;
};

template <class List>
struct or_no_binding;
template <class... B>
struct or_no_binding<type_list<B...>> {
  using type = type_list<B..., no_binding>;
};
template <class Points, std::size_t I>
struct point_at;
template <class... P, std::size_t I>
struct point_at<point_list<P...>, I> {
  using type = type_at_t<I, type_list<P..., void>>;
};

/// What the flow check reports on for Hook in the pack Pack of Runner.
template <class Runner, class Hook, class Pack>
struct fields_report;
template <class Runner, class Hook, class... Hooks>
struct fields_report<Runner, Hook, type_list<Hooks...>> {
  static constexpr unprovided_read read = [] {
    if constexpr (runner_fields<Runner>::declared && declares_fields_v<Hook>)
      return first_unprovided_read<Runner, Hook, Hooks...>();
    else
      return unprovided_read{};
  }();
  static constexpr bool provided = !read.found;
  using binding = type_at_t<provided ? bindings_of<Hook>::size : read.binding,
                            typename or_no_binding<bindings_of<Hook>>::type>;
  static constexpr auto field = fixed_string<read.field.size() + 1>(read.field);
  using point =
      typename point_at<points_of<Runner>, provided ? points_of<Runner>::size : read.point>::type;
  using present = typename present_fields<provided, Runner, read.point, Hooks...>::type;
};

/// The first method Hook's reads<> and writes<> name that is none of its handlers.
template <class Hook>
struct field_methods_report {
  using owner = typename declared_fields<Hook>::owner;
  static constexpr auto& uses = field_uses_v<owner>;
  static constexpr std::size_t index = [] {
    std::size_t i = 0;
    if constexpr (declares_fields_v<Hook> && has_bindings<owner>) {
      auto handler = [&]<class... B>(type_list<B...>) {
        return ((B::method == uses[i].method) || ...);
      };
      while (i < uses.size() && handler(bindings_of<owner>{})) ++i;
    } else {
      i = uses.size();
    }
    return i;
  }();
  static constexpr bool known = index == uses.size();
  static constexpr std::string_view unknown = known ? std::string_view{} : uses[index].method;
  static constexpr auto method = fixed_string<unknown.size() + 1>(unknown);
};

/// Lists field names in a composed message ("none" for no field).
template <fixed_string... Fields>
constexpr static_message& operator<<(static_message& message, field_list<Fields...>) {
  std::string_view separator;
  ((message << separator << Fields.view(), separator = ", "), ...);
  if constexpr (sizeof...(Fields) == 0) message << "none";
  return message;
}

}  // namespace detail

namespace check {

// Called from hook_pack's constructor, as checks.hpp's are (see there).

template <class Hook, fixed_string Method, bool Known>
constexpr void fields_name_handlers() {
#if HOOKFORGE_FIELDS_MESSAGES
  static_assert(Known, detail::static_message{}
                           << "hookforge: " << hook_name<Hook>() << " declares fields for "
                           << Method.view() << ", which is none of its handlers (reads<> and "
                           << "writes<> name methods listed in its `bindings`)");
#else
  static_assert(Known,
                "hookforge::fields: the hook has no handler with this method name (reads<> and "
                "writes<> name methods listed in its `bindings`) [Hook, Method: see 'with' above]");
#endif
}

template <class Runner, class Point, bool Listed>
constexpr void fields_at_runner_point() {
#if HOOKFORGE_FIELDS_MESSAGES
  static_assert(Listed, detail::static_message{} << "hookforge: the batch_fields of "
                                                 << runner_name<Runner>() << " name "
                                                 << detail::point_name<Point>()
                                                 << ", which is not one of its hook_points");
#else
  static_assert(Listed,
                "hookforge: the batch_fields of Runner name Point, which is not one of its "
                "hook_points [see 'with' above]");
#endif
}

template <class Hook, fixed_string Method, fixed_string Field, class Point, class Runner,
          class Present, bool Provided>
constexpr void handler_reads_present() {
#if HOOKFORGE_FIELDS_MESSAGES
  static_assert(Provided, detail::static_message{}
                              << "hookforge: " << hook_name<Hook>() << "::" << Method.view()
                              << " reads the batch field '" << Field.view() << "' at "
                              << detail::point_name<Point>() << ", which " << runner_name<Runner>()
                              << " does not provide there (fields: " << Present{}
                              << "). Provide it (dataset, model or an earlier hook's writes) "
                              << "or bind the handler later");
#else
  static_assert(Provided,
                "hookforge: handler Method of Hook reads batch field Field at Point, but no "
                "earlier stage of Runner provides it there (the fields present: Present). Provide "
                "it (dataset, model or an earlier hook's writes) or bind the handler later. [see "
                "'with' above]");
#endif
}

}  // namespace check
}  // namespace hookforge

#undef HOOKFORGE_FIELDS_MESSAGES
