// hookforge/core/fields.hpp — the batch fields a hook's handlers read and write, checked when
// the hook is attached against a runner that says which fields its batch holds where.
//
//   struct SrLogger {
//     void log(auto& ctx);
//     void upsample(auto& ctx);
//     static constexpr auto bindings = hookforge::bindings(
//         HOOKFORGE_HOOKS_INTO(upsample, points::on_pre_step),
//         HOOKFORGE_HOOKS_INTO(log, points::on_post_step));
//     static constexpr auto fields = hookforge::fields(hookforge::reads<"log", "lr", "output">{},
//                                                      hookforge::writes<"upsample", "sr">{});
//   };
//
// A runner whose batch fields are known at compile time says so beside hook_points and Ctx:
//
//   using batch_fields = hookforge::batch_fields<
//       hookforge::fields_at<points::on_pre_step, "input", "target">,
//       hookforge::fields_at<points::on_post_forward, "input", "target", "output">>;
//
// The flow rule: a handler bound at point P that reads field F is accepted when F is listed
// in the runner's fields_at<P>, or is written (writes<>) by a handler of any hook of the same
// pack bound to a point that comes earlier than P in the runner's hook_points. hookforge
// cannot see the runner's loop, so it takes the order of hook_points as the firing order:
// a runner with batch_fields lists its points as it fires them. A point with no fields_at is
// not checked; a hook without `fields` declares nothing (it is never checked, never an error);
// a runner without batch_fields checks nothing, and its attach costs no more than before.
// Fields are names only: what a field holds is the context's business. The checks are in
// core/field_checks.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/point.hpp"

namespace hookforge {

namespace detail {
/// What reads<> and writes<> share: a handler's method and the fields it reads or writes.
template <bool Writes, fixed_string Method, fixed_string... Fields>
struct field_use {
  static constexpr bool is_hookforge_field_use = true;
  static constexpr bool is_write = Writes;
  static constexpr std::string_view method = Method;
  static constexpr std::array<std::string_view, sizeof...(Fields)> names{Fields.view()...};
};

template <class U>
concept field_use_tag = requires { requires U::is_hookforge_field_use; };
}  // namespace detail

/// Handler `Method` reads the batch fields `Fields...`.
template <fixed_string Method, fixed_string... Fields>
struct reads : detail::field_use<false, Method, Fields...> {};

/// Handler `Method` writes (adds or replaces) the batch fields `Fields...`.
template <fixed_string Method, fixed_string... Fields>
struct writes : detail::field_use<true, Method, Fields...> {};

/// What a hook stores in `static constexpr auto fields`, as `bindings` does: an empty value
/// whose type lists the reads<> and writes<>.
template <detail::field_use_tag... Uses>
constexpr detail::type_list<Uses...> fields(Uses...) {
  return {};
}

/// Batch field names as a type: what the flow check's message lists.
template <fixed_string... Fields>
struct field_list {
  static constexpr std::array<std::string_view, sizeof...(Fields)> names{Fields.view()...};
};

/// The fields a runner's batch holds when it fires point P.
template <point P, fixed_string... Fields>
struct fields_at {
  using point_type = P;
  static constexpr std::array<std::string_view, sizeof...(Fields)> names{Fields.view()...};
};

namespace detail {
template <class T>
inline constexpr bool is_fields_at = false;
template <class P, fixed_string... F>
inline constexpr bool is_fields_at<fields_at<P, F...>> = true;
}  // namespace detail

/// A runner's `using batch_fields = ...`: its fields_at<>, one per point it checks (a point
/// listed twice holds the fields of both).
template <class... At>
  requires(detail::is_fields_at<At> && ...)
struct batch_fields {};

namespace detail {

/// One reads<> or writes<> as data.
struct field_use_view {
  std::string_view method;
  bool writes;
  std::span<const std::string_view> names;
};

/// A `fields` member not made by hookforge::fields() declares nothing.
template <class T>
struct as_field_uses {
  static constexpr bool declared = false;
  using type = type_list<>;
};
template <class... U>
  requires(field_use_tag<U> && ...)
struct as_field_uses<type_list<U...>> {
  static constexpr bool declared = true;
  using type = type_list<U...>;
};

/// H's `fields`, seen through wrappers; `owner` is the hook that declares them.
template <class H>
struct declared_fields : as_field_uses<void> {
  using owner = H;
};
template <class H>
  requires requires { typename H::inner_type; }
struct declared_fields<H> : declared_fields<typename H::inner_type> {};
template <class H>
  requires(!requires { typename H::inner_type; }) && requires { H::fields; }
struct declared_fields<H> : as_field_uses<std::remove_cvref_t<decltype(H::fields)>> {
  using owner = H;
};

template <class... U>
constexpr auto field_use_views(type_list<U...>) {
  return std::array<field_use_view, sizeof...(U)>{
      field_use_view{U::method, U::is_write, U::names}...};
}
template <class Owner>
inline constexpr auto field_uses_v = field_use_views(typename declared_fields<Owner>::type{});

/// Calls f(name) once per field that `method`'s reads<> (writes<> when `writes`) name, in
/// the order written.
template <class F>
constexpr void for_each_field(std::span<const field_use_view> uses, std::string_view method,
                              bool writes, F&& f) {
  auto matches = [&](const field_use_view& use) {
    return use.method == method && use.writes == writes;
  };
  for (std::size_t u = 0; u < uses.size(); ++u) {
    if (!matches(uses[u])) continue;
    for (std::size_t i = 0; i < uses[u].names.size(); ++i) {
      bool seen = false;
      for (std::size_t a = 0; a <= u; ++a)
        for (std::size_t b = 0; matches(uses[a]) && b < (a == u ? i : uses[a].names.size()); ++b)
          seen = seen || uses[a].names[b] == uses[u].names[i];
      if (!seen) f(uses[u].names[i]);
    }
  }
}

/// "reads lr, output; writes sr": what handler `method` declares, in a binding table's words.
template <class Out>
constexpr void describe_fields(std::span<const field_use_view> uses, std::string_view method,
                               Out&& out) {
  std::string_view between;
  for (bool writes : {false, true}) {
    std::string_view before = writes ? "writes " : "reads ";
    for_each_field(uses, method, writes, [&](std::string_view name) {
      out(between);
      out(before);
      out(name);
      between = "";
      before = ", ";
    });
    if (before == ", ") between = "; ";
  }
}

template <class Owner, fixed_string Method>
constexpr auto fields_text() {
  constexpr std::size_t size = [] {
    std::size_t n = 0;
    describe_fields(field_uses_v<Owner>, Method, [&](std::string_view s) { n += s.size(); });
    return n;
  }();
  std::array<char, size> text{};
  std::size_t i = 0;
  describe_fields(field_uses_v<Owner>, Method, [&](std::string_view s) {
    for (char c : s) text[i++] = c;
  });
  return text;
}
template <class Owner, fixed_string Method>
inline constexpr auto fields_text_v = fields_text<Owner, Method>();

}  // namespace detail

/// Does H declare its batch fields (`static constexpr auto fields = hookforge::fields(...)`),
/// itself or the hook it wraps? One that does not is never checked.
template <class H>
constexpr bool declares_fields_v = detail::declared_fields<H>::declared;

/// What one handler reads and writes, each field once, in the order written.
struct handler_fields {
  std::string_view method;
  std::vector<std::string_view> reads, writes;
  bool operator==(const handler_fields&) const = default;
};

/// The fields H's handlers declare, one entry per method that reads or writes any (its
/// reads<> and writes<> merged); empty when H declares none. For config checks and tables.
template <class H>
std::vector<handler_fields> field_use_of() {
  std::vector<handler_fields> out;
  if constexpr (declares_fields_v<H>) {
    constexpr auto& uses = detail::field_uses_v<typename detail::declared_fields<H>::owner>;
    for (const auto& use : uses) {
      bool listed = false;
      for (const auto& entry : out) listed = listed || entry.method == use.method;
      if (listed) continue;
      handler_fields entry{use.method, {}, {}};
      detail::for_each_field(uses, use.method, false, [&](auto f) { entry.reads.push_back(f); });
      detail::for_each_field(uses, use.method, true, [&](auto f) { entry.writes.push_back(f); });
      if (!entry.reads.empty() || !entry.writes.empty()) out.push_back(std::move(entry));
    }
  }
  return out;
}

/// What H's handler `method` declares (empty reads and writes when nothing).
template <class H>
handler_fields fields_of_handler(std::string_view method) {
  for (auto& entry : field_use_of<H>())
    if (entry.method == method) return entry;
  return {method, {}, {}};
}

/// One handler's declared fields at one point it is bound to: what a runner's
/// hooks().field_uses() lists for the checks made at run time (core/runtime/field_flow.hpp).
struct bound_fields {
  std::string_view point;
  std::string hook, method;
  std::vector<std::string_view> reads, writes;
};

/// Appends H's handlers that declare fields, once per point each is bound to (`hook`: the
/// name to show for it).
template <class H>
void append_bound_fields(std::vector<bound_fields>& out, std::string_view hook) {
  if constexpr (declares_fields_v<H>) {
    const auto uses = field_use_of<H>();
    for (const auto& [method, point] : list_bindings<H>())
      for (const auto& use : uses)
        if (use.method == method)
          out.push_back({point, std::string(hook), std::string(method), use.reads, use.writes});
  }
}

namespace detail {

/// What handler `Method` of H declares, as its binding-table row shows it ("" for nothing).
template <class H, fixed_string Method>
constexpr std::string_view handler_fields_text() {
  if constexpr (declares_fields_v<H>) {
    constexpr auto& text = fields_text_v<typename declared_fields<H>::owner, Method>;
    return {text.data(), text.size()};
  } else {
    return {};
  }
}

/// handler_fields_text for the handler in Slot (hook_pack's dispatch_slot: `hook`, the index
/// among Hooks, and `binding`, among that hook's bindings).
template <auto Slot, class... Hooks>
constexpr std::string_view handler_fields_text_at() {
  using H = type_at_t<Slot.hook, type_list<Hooks...>>;
  return handler_fields_text<H, type_at_t<Slot.binding, bindings_of<H>>::method_name>();
}

}  // namespace detail
}  // namespace hookforge
