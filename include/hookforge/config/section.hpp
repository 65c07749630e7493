// hookforge/config/section.hpp — a top-level section of settings (`system:`, `distributed:`)
// read into an options aggregate, field by field, the way a registered class reads its
// parameters (register.hpp's field / required / check):
//
//   struct system_options { std::int64_t seed = 0; std::int64_t threads = 0; };
//   auto s = hookforge::config::read_section<system_options>(
//       builder, "system", field("seed", &system_options::seed),
//       field("threads", &system_options::threads).check(non_negative, "a number of threads >=
//       0"));
//
// A missing or null section gives the aggregate's defaults; one that is no mapping, a key
// it does not list (with the closest names), a value of the wrong type or one `check`
// refuses are config_errors at the value.
#pragma once

#include <optional>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/document.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/keys.hpp"
#include "hookforge/config/register.hpp"

namespace hookforge::config {

/// The value of top-level section `name`, resolved; nothing when absent or null.
inline std::optional<value> section_value(builder& b, std::string_view name) {
  auto found = b.doc().root().find(name);
  if (!found) return std::nullopt;
  value v = b.doc().resolve(*found);
  if (v.is_null()) return std::nullopt;
  return v;
}

template <class Opts, class... M>
Opts read_section(builder& b, std::string_view name, const field_spec<Opts, M>&... fields) {
  const known_keys keys{.what = fmt::format("a key of {}", name),
                        .names = {std::string(fields.name)...}};
  const auto section = section_value(b, name);
  if (section && !section->is_map())
    throw config_error(
        section->where(), section->key(),
        fmt::format("a mapping of {} settings ({})", name, hookforge::join_names(keys.names, ", ")),
        section->describe());
  if (section) check_keys(*section, keys);
  Opts out{};
  auto read_one = [&]<class F>(const F& f) {
    if (auto v = section ? section->find(f.name) : std::nullopt) {
      detail::read_field(b, *v, out, f);
    } else if (f.required) {
      const value at = section ? *section : b.doc().root();
      throw config_error(at.where(), section ? at.key() : std::string(name),
                         fmt::format("the required setting '{}' ({}) of {}", f.name,
                                     value_traits<typename F::type>::expected(), name),
                         "no such key");
    }
  };
  (read_one(fields), ...);
  return out;
}

}  // namespace hookforge::config
