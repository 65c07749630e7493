// hookforge/config/detail/override.hpp — one `--set a.b=value`: its value parsed as YAML and
// written into a document's tree (document::set).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "hookforge/config/detail/dotted_path.hpp"
#include "hookforge/config/detail/load_yaml.hpp"
#include "hookforge/config/detail/source.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/interpolation.hpp"

namespace hookforge::config::detail {

/// Apply `assignment` ("a.b=value") to the tree under `root` (see document::set) and
/// return the override's source, whose nodes are now those at and under its path.
/// Throws config_error.
inline std::shared_ptr<const source> apply_override(YAML::Node& root, std::string_view assignment) {
  auto src = std::make_shared<source>();
  src->name = fmt::format("<--set {}>", assignment);
  auto fail = [&](std::string key, std::string expected, std::string got, std::string note = {}) {
    return config_error({src->name, 1, 1}, std::move(key), std::move(expected), std::move(got),
                        std::move(note));
  };
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos) throw fail({}, "key.path=value", quote(assignment));
  auto path = assignment.substr(0, eq);
  auto text = assignment.substr(eq + 1);
  if (auto problem = path_problem(path); !problem.empty())
    throw fail(std::string(path), "a dotted key path before '='", problem);
  src->column_offset = eq + 1;

  YAML::Node parsed;
  {
    auto nodes = load_yaml(std::string(text), *src);
    if (nodes.size() > 1)
      throw fail(std::string(path), "one YAML value after '='",
                 fmt::format("{} documents", nodes.size()));
    parsed.reset(nodes.empty() ? YAML::Node(YAML::NodeType::Null) : nodes[0]);
  }

  auto segments = split_path(path);
  YAML::Node current = root;
  std::string key, canonical;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    auto seg = segments[i];
    bool last = i + 1 == segments.size();
    std::string parent_key = key;
    if (current.IsSequence()) {
      auto index = parse_index(seg);
      if (!index || *index >= current.size())
        throw fail(std::string(path),
                   current.size() == 0
                       ? fmt::format("an index of {} (an empty list has none)", parent_key)
                       : fmt::format("an index of {} (0 to {})", parent_key, current.size() - 1),
                   quote(seg));
      key = fmt::format("{}[{}]", key, *index);
      canonical = join_key(canonical, seg);
      if (last) {
        current[*index] = parsed;
      } else {
        YAML::Node next = current[*index];
        if (next.IsNull()) {
          current[*index] = YAML::Node(YAML::NodeType::Map);
          next = current[*index];
        }
        current.reset(next);
      }
      continue;
    }
    if (!current.IsMap())
      throw fail(std::string(path),
                 fmt::format("a mapping at {}", parent_key.empty() ? "<document>" : parent_key),
                 current.IsScalar() ? quote(current.Scalar()) : std::string("null"));
    key = join_key(key, seg);
    canonical = join_key(canonical, seg);
    bool found = false;
    YAML::Node existing;
    std::vector<std::string> names;
    for (auto it = current.begin(); it != current.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      names.push_back(it->first.Scalar());
      if (it->first.Scalar() == seg) {
        found = true;
        existing.reset(it->second);
      }
    }
    if (last) {
      // Remove, then insert: assigning to the existing node would change every alias of it.
      if (found) current.remove(std::string(seg));
      current.force_insert(std::string(seg), parsed);
      break;
    }
    if (!found)
      throw fail(std::string(path),
                 fmt::format("a key of {}", parent_key.empty() ? "<document>" : parent_key),
                 quote(seg), closest_note(seg, names));
    if (existing.IsNull()) {
      current.remove(std::string(seg));
      current.force_insert(std::string(seg), YAML::Node(YAML::NodeType::Map));
      for (auto it = current.begin(); it != current.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == seg) existing.reset(it->second);
    }
    current.reset(existing);
  }
  src->path = canonical;
  return src;
}

}  // namespace hookforge::config::detail
