// Building test configs: from text or a file, with --set overrides, then every
// top-level section the test domain knows (train, val: components; shape: a Shape).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.hpp"

namespace cfg_fixtures {

struct run {
  std::unique_ptr<hookforge::config::builder> b;
  std::shared_ptr<component> train, val;
  std::shared_ptr<Shape> shape;
};

inline run build_all(hookforge::config::document doc, const std::vector<std::string>& sets = {},
                     hookforge::config::build_options options = {}) {
  for (const auto& s : sets) doc.set(s);
  run r;
  r.b = std::make_unique<hookforge::config::builder>(std::move(doc), options);
  auto root = r.b->doc().root();
  if (root.find("train")) r.train = r.b->get<std::shared_ptr<component>>("train");
  if (root.find("val")) r.val = r.b->get<std::shared_ptr<component>>("val");
  if (root.find("shape")) r.shape = r.b->get<std::shared_ptr<Shape>>("shape");
  return r;
}

inline run build_text(std::string_view text, const std::vector<std::string>& sets = {},
                      hookforge::config::build_options options = {}) {
  return build_all(hookforge::config::document::parse(text, "test.yaml"), sets, options);
}

/// The config_error message of building `text`, or "" when it builds.
inline std::string error_of(std::string_view text, const std::vector<std::string>& sets = {},
                            hookforge::config::build_options options = {}) {
  try {
    build_text(text, sets, options);
  } catch (const hookforge::config::config_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace cfg_fixtures
