// hookforge/config/register.hpp — registering a class so that a config can name it.
//
// One line, in any translation unit, at namespace scope:
//
//   // constructor arguments, in order: Counter(int start, std::string label)
//   HOOKFORGE_REGISTER(hook, Counter, hookforge::config::arg<int>("start", 0),
//                                     hookforge::config::arg<std::string>("label"));
//   // an options aggregate: GradientClip(gradient_clip_options)
//   HOOKFORGE_REGISTER(hook, GradientClip,
//       hookforge::config::options<gradient_clip_options>(
//           hookforge::config::field("max_norm", &gradient_clip_options::max_norm,
//           hookforge::config::required), hookforge::config::field("norm_type",
//           &gradient_clip_options::norm_type)));
//   // any other construction: a factory first, then the parameters it takes
//   HOOKFORGE_REGISTER(shape, Circle, hookforge::config::factory([](double d) { return Circle(d /
//   2); }),
//                      hookforge::config::arg<double>("diameter"));
//   // under another name than the class's
//   HOOKFORGE_REGISTER_AS(hook, "Count", Counter, ...);
//
// `kind` names a tag in hookforge::config::kinds: `hook` (torch layer), `hook_kind<Ctx...>`
// aliases of your own, or an object kind from HOOKFORGE_DECLARE_KIND. Each parameter
// gives its name, its type (value_traits: what the config must hold) and a default;
// without a default it is required, except std::optional ones. A config naming an
// unknown parameter, leaving out a required one, or giving a wrong type gets a
// config_error at that line. Exceptions the constructor throws become config_errors
// at the entry's params.
//
// Registration runs during static initialisation. A registration inside a static
// library is dropped by the linker unless something else in its object file is used:
// register in the executable, or link the library whole.
#pragma once

#include <concepts>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/convert.hpp"
#include "hookforge/config/detail/dotted_path.hpp"
#include "hookforge/config/keys.hpp"
#include "hookforge/config/registry.hpp"
#include "hookforge/core/type_name.hpp"

namespace hookforge::config {

/// A constructor argument read from `params.<name>`; required unless a default is given
/// (or T is a std::optional).
template <class T>
struct arg {
  using type = T;
  std::string_view name;
  std::optional<T> fallback;
  bool output = false;       ///< a path the run writes to (output_path)
  std::string_view names{};  ///< what a written string names (naming), checked once built

  explicit arg(std::string_view n) : name(n) {}
  arg(std::string_view n, T default_value) : name(n), fallback(std::move(default_value)) {}

  /// The path is one the run writes to: placed under the run's output directory, and kept
  /// inside it (builder::output_path). `arg<std::filesystem::path>("out_dir").output_path()`.
  arg output_path() const
    requires std::is_same_v<T, std::filesystem::path>
  {
    arg a = *this;
    a.output = true;
    return a;
  }

  /// As field_spec::naming, for a value the config writes (a factory's default is not noted:
  /// a factory may not use it).
  arg naming(std::string_view what) const
    requires std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>>
  {
    arg a = *this;
    a.names = what;
    return a;
  }
};

struct required_t {};
/// Marks an options field that the config must give.
inline constexpr required_t required{};

/// A field of an options aggregate, read from `params.<name>`; its default is the
/// aggregate's default member initializer.
template <class Opts, class M>
struct field_spec {
  using options_type = Opts;
  using type = M;
  std::string_view name;
  M Opts::* member;
  bool required = false;
  bool (*valid)(const M&) = nullptr;  ///< nullptr: every value of type M is valid
  std::string valid_expected{};       ///< what `valid` accepts, for the message
  std::string_view names{};           ///< what a string names (naming), checked once built
  bool infinite_ok = false;  ///< a floating-point field that takes .inf (allowing_infinity)
  bool output = false;       ///< a path the run writes to (output_path)

  /// The field, accepting only values `pred` holds for; others are a config_error at the
  /// value, "expected <expected>": `field("threads", &o::threads).check(non_negative, "...")`.
  field_spec check(bool (*pred)(const M&), std::string expected) const {
    field_spec f = *this;
    f.valid = pred;
    f.valid_expected = std::move(expected);
    return f;
  }

  /// A floating-point field that takes .inf and -.inf too (numbers are finite elsewhere):
  /// `field("norm_type", &o::norm_type).allowing_infinity()` for GradientClip's largest |g|.
  field_spec allowing_infinity() const
    requires std::floating_point<M>
  {
    field_spec f = *this;
    f.infinite_ok = true;
    return f;
  }

  /// The field is a path the run writes to: placed under the run's output directory, and
  /// kept inside it (builder::output_path). `field("out_dir", &o::out_dir).output_path()`.
  field_spec output_path() const
    requires std::is_same_v<M, std::filesystem::path>
  {
    field_spec f = *this;
    f.output = true;
    return f;
  }

  /// The field's string (or each string of a list) names something known only once
  /// everything is built (`what`: "a validation score", "a field of the batch"): the
  /// builder notes it with its place (builder::named_references), for the program to check
  /// then; a default the config leaves out is noted too, at its entry.
  /// `field("monitor", &o::monitor).naming(...)`.
  field_spec naming(std::string_view what) const
    requires std::is_same_v<M, std::string> || std::is_same_v<M, std::vector<std::string>>
  {
    field_spec f = *this;
    f.names = what;
    return f;
  }
};

template <class Opts, class M>
field_spec<Opts, M> field(std::string_view name, M Opts::* member) {
  return {name, member, false};
}
template <class Opts, class M>
field_spec<Opts, M> field(std::string_view name, M Opts::* member, required_t) {
  return {name, member, true};
}

/// The class is constructed from one `Opts`, filled field by field.
template <class Opts, class... F>
struct options_spec {
  std::tuple<F...> fields;
};
template <class Opts, class... F>
auto options(F... fields) {
  static_assert((std::is_same_v<typename F::options_type, Opts> && ...),
                "hookforge::config::options<Opts>: every field must be a member of Opts");
  if constexpr ((std::is_same_v<typename F::options_type, Opts> && ...))
    return options_spec<Opts, F...>{{std::move(fields)...}};
  else
    return options_spec<Opts>{};  // the assertion above is the one message
}

/// Construct with `fn(params...)` instead of the constructor. `fn` returns the class, a
/// std::shared_ptr to it, or (for an object kind) to a class derived from it.
template <class F>
struct factory_spec {
  F fn;
};
template <class F>
factory_spec<F> factory(F fn) {
  return {std::move(fn)};
}

/// An object kind: entries build a `std::shared_ptr<Base>` (see HOOKFORGE_DECLARE_KIND).
template <class Base>
struct object_kind {
  static constexpr std::span<const std::string_view> entry_keys{};
  static constexpr std::span<const std::string_view> reserved_params{};
  template <class T>
  static std::shared_ptr<Base> wrap(builder&, const value&, const std::optional<value>&,
                                    std::shared_ptr<T> object) {
    static_assert(
        std::is_convertible_v<T*, Base*>,
        "hookforge::config: a class registered under an object kind must derive from its base");
    if constexpr (std::is_convertible_v<T*, Base*>)
      return std::shared_ptr<Base>(std::move(object));
    else
      return nullptr;  // the assertion above is the one message
  }
};

namespace detail {

template <class S>
constexpr bool is_arg = false;
template <class T>
constexpr bool is_arg<arg<T>> = true;
template <class S>
constexpr bool is_options = false;
template <class Opts, class... F>
constexpr bool is_options<options_spec<Opts, F...>> = true;
template <class S>
constexpr bool is_factory = false;
template <class F>
constexpr bool is_factory<factory_spec<F>> = true;

/// What an output path's parameter takes, as --list and docs/config.md say it.
inline const std::string output_path_expected = "a path in the work directory";

template <class T>
param_info describe(const arg<T>& a) {
  bool optional = is_optional<T>;
  return {std::string(a.name), a.output ? output_path_expected : value_traits<T>::expected(),
          !a.fallback && !optional,
          a.fallback ? show(*a.fallback) : (optional ? std::string("null") : std::string())};
}
template <class Opts, class M>
param_info describe(const field_spec<Opts, M>& f) {
  static const Opts defaults{};
  return {std::string(f.name), f.output ? output_path_expected : value_traits<M>::expected(),
          f.required, f.required ? std::string() : show(defaults.*(f.member))};
}

/// The names the class takes, for "unknown parameter" checks.
inline std::vector<std::string> names_of(const std::vector<param_info>& params) {
  std::vector<std::string> out;
  for (const auto& p : params) out.push_back(p.name);
  return out;
}

/// A value read from `v` that names `what` (naming): noted, each item of a list at its own key.
template <class M>
void note_names(builder& b, std::string_view what, const value& v, const M& x) {
  if (what.empty()) return;
  if constexpr (std::is_same_v<M, std::string>) {
    b.note_name({std::string(what), x, v.where(), v.key()});
  } else if constexpr (std::is_same_v<M, std::vector<std::string>>) {
    const auto items = b.doc().resolve(v).elements();
    for (std::size_t i = 0; i < x.size() && i < items.size(); ++i)
      b.note_name({std::string(what), x[i], items[i].where(), items[i].key()});
  }
}

/// Reads field `f` of `out` from `v`, checked by f.valid.
template <class Opts, class M>
void read_field(builder& b, const value& v, Opts& out, const field_spec<Opts, M>& f) {
  M x = [&] {
    if constexpr (std::floating_point<M>)
      if (f.infinite_ok) return detail::read_floating<M>(b.doc().resolve(v), true);
    return b.template read<M>(v);
  }();
  if (f.valid && !f.valid(x))
    throw config_error(v.where(), v.key(), f.valid_expected, v.describe());
  note_names(b, f.names, v, x);
  if constexpr (std::is_same_v<M, std::filesystem::path>)
    if (f.output) x = b.output_path(v, x);
  out.*(f.member) = std::move(x);
}

/// Reads the parameters of one entry: checks the names, then each value in turn.
class param_reader {
 public:
  param_reader(builder& b, const value& entry, std::string_view class_name,
               const std::vector<param_info>& params, std::span<const std::string_view> reserved)
      : b_(b), entry_(entry), class_name_(class_name) {
    if (auto p = entry.find("params")) {
      params_ = b.doc().resolve(*p);
      if (params_->is_null()) {
        params_.reset();
      } else if (!params_->is_map()) {
        throw config_error(params_->where(), params_->key(),
                           fmt::format("a mapping of {}'s parameters", class_name),
                           params_->describe());
      }
    }
    if (!params_) return;
    check_keys(*params_,
               known_keys{.what = fmt::format("a parameter of {}", class_name),
                          .names = names_of(params),
                          .unlisted = reserved,
                          .if_none = fmt::format("no parameters ({} takes none)", class_name)});
  }

  const std::optional<value>& params() const { return params_; }

  /// The value of parameter `name`, or nothing when the config leaves it out.
  std::optional<value> find(std::string_view name) const {
    if (!params_) return std::nullopt;
    return params_->find(name);
  }

  [[noreturn]] void missing(std::string_view name, const std::string& type) const {
    const value& at = params_ ? *params_ : entry_;
    throw config_error(
        at.where(), params_ ? at.key() : detail::join_key(at.key(), "params"),
        fmt::format("the required parameter '{}' ({}) of {}", name, type, class_name_),
        "no such key");
  }

  template <class T>
  T read(const arg<T>& a) {
    if (auto v = find(a.name)) {
      if constexpr (std::is_same_v<T, std::filesystem::path>)
        if (a.output) return b_.output_path(*v, b_.template read<T>(*v));
      T x = b_.template read<T>(*v);
      note_names(b_, a.names, *v, x);
      return x;
    }
    if (a.fallback) return *a.fallback;
    if constexpr (is_optional<T>) return T{};
    missing(a.name, value_traits<T>::expected());
  }

  template <class Opts, class M>
  void read(Opts& out, const field_spec<Opts, M>& f) {
    if (auto v = find(f.name))
      read_field(b_, *v, out, f);
    else if (f.required)
      missing(f.name, value_traits<M>::expected());
    else if constexpr (std::is_same_v<M, std::string> ||
                       std::is_same_v<M, std::vector<std::string>>)
      if (!f.names.empty()) note_default(f.names, out.*(f.member), f.name);
  }

 private:
  /// A `naming` field left out: its default (one name or a list) noted at the entry.
  template <class M>
  void note_default(std::string_view what, const M& fallback, std::string_view name) {
    const auto key = detail::join_key(detail::join_key(entry_.key(), "params"), name);
    if constexpr (std::is_same_v<M, std::string>) {
      b_.note_name({std::string(what), fallback, entry_.where(), key, false});
    } else {
      for (std::size_t i = 0; i < fallback.size(); ++i)
        b_.note_name(
            {std::string(what), fallback[i], entry_.where(), fmt::format("{}[{}]", key, i), false});
    }
  }

  builder& b_;
  const value& entry_;
  std::string_view class_name_;
  std::optional<value> params_;
};

/// The std::shared_ptr<T> a factory's result stands for.
template <class U>
constexpr bool is_shared_ptr = false;
template <class U>
constexpr bool is_shared_ptr<std::shared_ptr<U>> = true;

template <class T, class R>
std::shared_ptr<T> to_shared(R&& result) {
  using U = std::remove_cvref_t<R>;
  if constexpr (is_shared_ptr<U>)
    return std::shared_ptr<T>(std::forward<R>(result));
  else
    return std::make_shared<T>(std::forward<R>(result));
}

template <class T>
struct construct_default {
  template <class... A>
  std::shared_ptr<T> operator()(A&&... args) const {
    if constexpr (std::is_constructible_v<T, A...>)
      return std::make_shared<T>(std::forward<A>(args)...);
    else
      return nullptr;  // register_entry reported it, at the registration
  }
};

/// The values the parameters give, in order: the args' types, or one options aggregate.
template <class... S>
struct spec_values {
  template <class T>
  static constexpr bool construct = true;  // a mix: make_object's assertion reports it
};
template <class... T>
struct spec_values<arg<T>...> {
  template <class U>
  static constexpr bool construct = std::is_constructible_v<U, T...>;
};
template <class Opts, class... F>
struct spec_values<options_spec<Opts, F...>> {
  template <class U>
  static constexpr bool construct = std::is_constructible_v<U, Opts>;
};

template <class T, class Maker, class... S>
std::shared_ptr<T> make_object(param_reader& r, const Maker& maker, const S&... specs) {
  static_assert((is_arg<S> && ...),
                "hookforge::config: parameters are arg<T>(...)s, or one options<Opts>(...) alone");
  if constexpr ((is_arg<S> && ...)) {
    // Braces: the parameters are read in order, so the first mistake is reported first.
    std::tuple<typename S::type...> values{r.read(specs)...};
    return std::apply([&](auto&&... v) { return to_shared<T>(maker(std::move(v)...)); },
                      std::move(values));
  } else {
    return std::shared_ptr<T>();  // the assertion above is the one message
  }
}

template <class T, class Maker, class Opts, class... F>
std::shared_ptr<T> make_object(param_reader& r, const Maker& maker,
                               const options_spec<Opts, F...>& spec) {
  Opts opts{};
  std::apply([&](const auto&... f) { (r.read(opts, f), ...); }, spec.fields);
  return to_shared<T>(maker(std::move(opts)));
}

template <class S>
void add_params(std::vector<param_info>& out, const S& spec) {
  if constexpr (is_arg<S>) {
    out.push_back(describe(spec));
  } else if constexpr (is_options<S>) {
    std::apply([&](const auto&... f) { (out.push_back(describe(f)), ...); }, spec.fields);
  }
}

template <class Kind, class T, class Maker, class... S>
bool register_with(std::string_view name, std::string_view file, int line, Maker maker,
                   S... specs) {
  using Handle = typename Kind::handle;
  static_assert(kind_handle<Handle>, "hookforge::config: the kind's handle has no kind_traits");
  if constexpr (!kind_handle<Handle>) {
    return false;  // the assertion above is the one message
  } else {
    if constexpr (requires { Kind::template on_register<T>(); }) Kind::template on_register<T>();
    registry_entry<Handle> e;
    e.name = std::string(name);
    e.type = std::string(type_name<T>());
    e.site = fmt::format("{}:{}", file, line);
    (add_params(e.params, specs), ...);
    e.build = [maker = std::move(maker), params = e.params, specs...](
                  builder& b, const value& entry) -> Handle {
      auto name_value = entry.find("_target");
      std::string class_name =
          name_value ? name_value->scalar() : std::string(short_type_name<T>());
      param_reader reader(b, entry, class_name, params, kind_traits<Handle>::reserved_params);
      auto object = make_object<T>(reader, maker, specs...);
      return kind_traits<Handle>::template wrap<T>(b, entry, reader.params(), std::move(object));
    };
    registry<Handle>::instance().add(std::move(e));
    return true;
  }
}

template <class... S>
constexpr bool first_is_factory() {
  if constexpr (sizeof...(S) == 0)
    return false;
  else
    return is_factory<std::tuple_element_t<0, std::tuple<S...>>>;
}

template <class Kind, class T, class... S>
bool register_entry(std::string_view name, std::string_view file, int line, S... specs) {
  if constexpr (first_is_factory<S...>()) {
    return [&]<class F, class... Rest>(factory_spec<F> f, Rest... rest) {
      static_assert(!(is_factory<Rest> || ...),
                    "hookforge::config: give at most one factory, first");
      if constexpr ((is_factory<Rest> || ...))
        return false;  // the assertion above is the one message
      else
        return register_with<Kind, T>(name, file, line, std::move(f.fn), std::move(rest)...);
    }(std::move(specs)...);
  } else {
    static_assert(!(is_factory<S> || ...),
                  "hookforge::config: the factory comes first, before the parameters");
    constexpr bool constructible = spec_values<S...>::template construct<T>;
    static_assert(
        (is_factory<S> || ...) || constructible,
        "hookforge::config: the registered class has no constructor taking the registered "
        "parameters in this order and of these types");
    if constexpr ((is_factory<S> || ...) || !constructible)
      return false;  // the assertion above is the one message
    else
      return register_with<Kind, T>(name, file, line, construct_default<T>{}, std::move(specs)...);
  }
}

}  // namespace detail

}  // namespace hookforge::config

#define HOOKFORGE_CONFIG_CAT2(a, b) a##b
#define HOOKFORGE_CONFIG_CAT(a, b) HOOKFORGE_CONFIG_CAT2(a, b)

/// Register `Type` under `name` in the registry of kind `kind` (a tag in
/// hookforge::config::kinds), with its parameters (arg / options / factory).
#define HOOKFORGE_REGISTER_AS(kind, name, Type, ...)                                       \
  [[maybe_unused]] static const bool HOOKFORGE_CONFIG_CAT(hookforge_config_registered_,    \
                                                          __COUNTER__) =                   \
      ::hookforge::config::detail::register_entry<::hookforge::config::kinds::kind, Type>( \
          name, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__)

/// Register `Type` under its own name (without namespaces or template arguments).
#define HOOKFORGE_REGISTER(kind, Type, ...) \
  HOOKFORGE_REGISTER_AS(kind, ::hookforge::short_type_name<Type>(), Type __VA_OPT__(, ) __VA_ARGS__)

/// Declare an object kind: entries registered under `kind` build classes derived from
/// `Base` (`...`), held as std::shared_ptr<Base>; a parameter of that type takes an entry
/// or a ${ref}. At global scope, once per program (in a header of yours).
#define HOOKFORGE_DECLARE_KIND(kind, ...)                             \
  template <>                                                         \
  struct hookforge::config::kind_traits<std::shared_ptr<__VA_ARGS__>> \
      : ::hookforge::config::object_kind<__VA_ARGS__> {               \
    static constexpr std::string_view name = #kind;                   \
  };                                                                  \
  namespace hookforge::config::kinds {                                \
  struct kind {                                                       \
    using handle = std::shared_ptr<__VA_ARGS__>;                      \
  };                                                                  \
  }                                                                   \
  static_assert(true)
