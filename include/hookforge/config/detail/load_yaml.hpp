// hookforge/config/detail/load_yaml.hpp — YAML text to nodes, around yaml-cpp's failures:
// its exceptions become located config_errors, and a stream its parser loops on is refused.
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#if __has_include(<yaml-cpp/depthguard.h>)  // yaml-cpp 0.7: a nesting limit in the parser
#include <yaml-cpp/depthguard.h>
#define HOOKFORGE_YAML_DEPTH_GUARD 1
#endif

#include "hookforge/config/detail/source.hpp"
#include "hookforge/config/error.hpp"

namespace hookforge::config::detail {

/// Where a YAML stream's parser stops making progress, if it does. yaml-cpp up to 0.8.0
/// reports an empty document for a token no value can start with (a ',' where a document
/// begins) without consuming it, so YAML::LoadAll collects empty documents until memory
/// runs out (jbeder/yaml-cpp#1040, fixed after 0.8.0 by #1319; Debian 12 has 0.7.0).
/// This pass reads the documents' events without building nodes and stops at a document
/// that starts where the previous one did; every document YAML accepts consumes a token.
/// Throws what the parser throws for invalid YAML.
inline std::optional<YAML::Mark> stuck_document(const std::string& text) {
  struct starts : YAML::EventHandler {
    YAML::Mark start = YAML::Mark::null_mark();
    void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  std::optional<int> previous;
  for (starts doc; parser.HandleNextDocument(doc); doc = starts{}) {
    if (previous == doc.start.pos) return doc.start;
    previous = doc.start.pos;
  }
  return std::nullopt;
}

/// The documents of `text` (YAML::LoadAll), or a config_error "expected valid YAML" at
/// the place in `src` where yaml-cpp stopped, or where its parser would loop.
inline std::vector<YAML::Node> load_yaml(const std::string& text, const source& src) {
  std::optional<YAML::Mark> stuck;
  try {
    stuck = stuck_document(text);
    if (!stuck) return YAML::LoadAll(text);
  }
#ifdef HOOKFORGE_YAML_DEPTH_GUARD
  catch (const YAML::DeepRecursion& e) {  // its message says "bad file"
    throw config_error(
        locate(e.mark, src), {}, "YAML nested fewer levels deep",
        fmt::format("YAML nested deeper than {} levels, where yaml-cpp stops", e.depth() - 1));
  }
#endif
  catch (const YAML::Exception& e) {
    throw config_error(locate(e.mark, src), {}, "valid YAML",
                       e.msg.empty() ? std::string(e.what()) : e.msg);
  } catch (const std::exception& e) {
    throw config_error({src.name, 1, 1}, {}, "valid YAML", e.what());
  }
  auto pos = static_cast<std::size_t>(stuck->pos);
  throw config_error(locate(*stuck, src), {}, "valid YAML",
                     fmt::format("{} where no YAML value can start",
                                 pos < text.size() ? quote(std::string_view(text).substr(pos, 1))
                                                   : std::string("the end of the text")));
}

}  // namespace hookforge::config::detail
