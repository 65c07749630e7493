// Loading, locations, `${...}` and `--set`, without building anything.
#include <catch2/catch.hpp>

#include <string>

#include "hookforge/config.hpp"

namespace cfg = hookforge::config;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const cfg::config_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("interpolation pieces: text, ${path}, ${ref:path}, $${ escapes", "[config][document]") {
  auto p = cfg::parse_interpolation("out/${system.dir}/x-$${y}");
  REQUIRE(!p.error);
  REQUIRE(p.pieces.size() == 3);
  CHECK(p.pieces[0].content == "out/");
  CHECK(p.pieces[1].kind == cfg::interpolation_piece::value);
  CHECK(p.pieces[1].content == "system.dir");
  CHECK(p.pieces[2].content == "/x-${y}");
  CHECK(p.whole() == nullptr);

  auto r = cfg::parse_interpolation("${ref:hooks.0}");
  REQUIRE(r.whole());
  CHECK(r.whole()->kind == cfg::interpolation_piece::ref);
  CHECK(r.whole()->content == "hooks.0");

  CHECK(cfg::parse_interpolation("${a").error->expected == "'}' closing '${'");
  CHECK(cfg::parse_interpolation("${}").error->got == "an empty path in '${}'");
  CHECK(cfg::parse_interpolation("${a b}").error->got == "the character ' ' in '${a b}'");
  CHECK(cfg::parse_interpolation("${ref:.a}").error->got == "an empty key in '${ref:.a}'");
}

TEST_CASE("values know their key path and location", "[config][document]") {
  auto doc = cfg::document::parse("a:\n  b: [1, {c: x}]\n", "f.yaml");
  auto c = doc.at("a.b.1.c");
  CHECK(c.key() == "a.b[1].c");
  CHECK(c.path() == "a.b.1.c");
  CHECK(c.where().file == "f.yaml");
  CHECK(c.where().line == 2);
  CHECK(c.where().column == 14);
  CHECK(c.describe() == "'x'");
  CHECK(doc.at("a.b").describe() == "a list");
  CHECK(error_of([&] { doc.at("a.c"); }) ==
        "f.yaml:1:1: a.c: expected a path that exists, got 'a.c': 'c' is no key of a (closest: b)");
  CHECK(error_of([&] {
          doc.at("a.b.5");
        }).find("a.b is a list of 2 items, '5' is none of its indices") != std::string::npos);
}

TEST_CASE("${path} keeps the type, text interpolation substitutes scalars", "[config][document]") {
  auto doc = cfg::document::parse(R"(
vars: {steps: 3, name: run, list: [1, 2], price: "$${cheap}"}
a: ${vars.steps}
b: out/${vars.name}-${vars.steps}
c: ${vars.list}
d: ${a}
)");
  doc.validate();
  auto a = doc.resolve(doc.at("a"));
  CHECK(a.scalar() == "3");
  CHECK(a.key() == "a");
  CHECK(a.where().line == 3);  // where ${vars.steps} is written
  CHECK(a.describe() == "'3' (from ${vars.steps})");
  CHECK(doc.resolve(doc.at("b")).scalar() == "out/run-3");
  CHECK(doc.resolve(doc.at("c")).is_sequence());
  CHECK(doc.resolve(doc.at("d")).scalar() == "3");
  CHECK(doc.resolve(doc.at("vars.price")).scalar() == "${cheap}");
}

TEST_CASE("set overrides (--set) values, parsed as YAML, located in the override",
          "[config][document]") {
  auto doc = cfg::document::parse("train:\n  params: {steps: 1}\nlist: [a, b]\nempty:\n");
  doc.set("train.params.steps=7");
  doc.set("train.params.name=abc");
  doc.set("list.1=z");
  doc.set("empty.x=[1, 2]");
  doc.set("train.params.flag=true");
  doc.validate();
  CHECK(doc.at("train.params.steps").scalar() == "7");
  CHECK(doc.at("train.params.name").scalar() == "abc");
  CHECK(doc.at("list.1").scalar() == "z");
  CHECK(doc.at("empty.x").is_sequence());
  auto steps = doc.at("train.params.steps").where();
  CHECK(steps.file == "<--set train.params.steps=7>");
  CHECK(steps.column == 20);  // the value's column in the argument
  CHECK(doc.at("list.0").where().file == "<string>");

  CHECK(error_of([&] { doc.set("train.parms.steps=1"); }) ==
        "<--set train.parms.steps=1>:1:1: train.parms.steps: expected a key of train, got 'parms' "
        "(closest: params)");
  CHECK(error_of([&] { doc.set("train.params.steps"); }) ==
        "<--set train.params.steps>:1:1: <document>: expected key.path=value, got "
        "'train.params.steps'");
  CHECK(error_of([&] {
          doc.set("list.7=x");
        }).find("expected an index of list (0 to 1), got '7'") != std::string::npos);
  CHECK(error_of([&] {
          doc.set("train.params.steps=[1, 2");
        }).starts_with("<--set train.params.steps=[1, 2>:1:"));
  CHECK(error_of([&] {
          doc.set("a..b=1");
        }).find("expected a dotted key path before '=', got an empty key") != std::string::npos);
  auto empty = cfg::document::parse("list: []\n", "e.yaml");  // not "(0 to 18446744073709551615)"
  CHECK(
      error_of([&] { empty.set("list.0=1"); }) ==
      "<--set list.0=1>:1:1: list.0: expected an index of list (an empty list has none), got '0'");
}

TEST_CASE(
    "a token no YAML value starts with, where a document starts, is an error, not an endless loop",
    "[config][document]") {
  // yaml-cpp 0.7's LoadAll collected empty documents at a leading ',' until memory ran out
  // (found by fuzz/config_fuzzer.cpp; jbeder/yaml-cpp#1040).
  CHECK(error_of([] { cfg::document::parse(",", "c.yaml"); }) ==
        "c.yaml:1:1: <document>: expected valid YAML, got ',' where no YAML value can start");
  CHECK(error_of([] { cfg::document::parse(", b]\n: &\n: &\n", "c.yaml"); }) ==
        "c.yaml:1:1: <document>: expected valid YAML, got ',' where no YAML value can start");
  CHECK(error_of([] { cfg::document::parse("a: 1\n---\n  ,\n", "c.yaml"); }) ==
        "c.yaml:3:3: <document>: expected valid YAML, got ',' where no YAML value can start");
  auto doc = cfg::document::parse("a: 1\n", "c.yaml");
  CHECK(error_of([&] { doc.set("a=,"); }) ==
        "<--set a=,>:1:3: <document>: expected valid YAML, got ',' where no YAML value can start");
  CHECK(error_of([] { cfg::document::parse("a: 1\n---\nb: 2\n", "c.yaml"); }) ==
        "c.yaml:3:1: <document>: expected one YAML document, got 2 documents");
}

TEST_CASE("limits: depth, nodes and size are configurable", "[config][document]") {
  cfg::limits small{.max_bytes = 64, .max_depth = 2, .max_nodes = 5};
  CHECK(error_of([&] { cfg::document::parse("a: {b: {c: 1}}", "s.yaml", small).validate(); }) ==
        "s.yaml:1:12: a.b.c: expected at most 2 levels of nesting, got deeper nesting");
  CHECK(error_of([&] {
          cfg::document::parse("a: [1, 2, 3, 4, 5, 6]", "s.yaml", small).validate();
        }).find("expected at most 5 nodes (aliases count each use), got more") !=
        std::string::npos);
  CHECK(error_of([&] { cfg::document::parse(std::string(100, '#'), "s.yaml", small); }) ==
        "s.yaml:1:1: <document>: expected a config of at most 64 bytes, got 100 bytes");
  CHECK(error_of([&] {
          cfg::document::parse("a: ${b}\nb: ${c}\nc: ${d}\nd: 1", "s.yaml", {.max_depth = 2})
              .validate();
        }).find("expected at most 2 nested ${...}, got more") != std::string::npos);
}

namespace {
/// `levels` keys under `s:`, each the next-lower one `fan` times over: a0 is one byte, a<n>
/// expands to fan^n bytes, reached through fan^n references when each is followed anew.
std::string fan_out(int levels, int fan, const std::string& tail = {}) {
  std::string text = "s:\n  a0: x\n";
  for (int level = 1; level <= levels; ++level) {
    text += "  a" + std::to_string(level) + ": \"";
    for (int i = 0; i < fan; ++i) text += "${s.a" + std::to_string(level - 1) + "}";
    text += "\"\n";
  }
  return text + tail;
}
}  // namespace

TEST_CASE("each ${...} is resolved once: references to references stay linear",
          "[config][document]") {
  // 10^6 bytes after six levels: followed anew, a6 alone is a million look-ups (minutes).
  auto doc = cfg::document::parse(fan_out(6, 10, "b: ${s.a6}\nc: ${s.a6}/more\n"), "f.yaml");
  doc.validate();
  CHECK(doc.resolve(doc.at("s.a6")).scalar() == std::string(1'000'000, 'x'));
  auto b = doc.resolve(doc.at("b"));
  CHECK(b.key() == "b");  // a kept result is seen from where it is reached
  CHECK(b.where().line == 9);
  CHECK(b.scalar().size() == 1'000'000);
  CHECK(doc.resolve(doc.at("c")).scalar().ends_with("x/more"));
  doc.set("s.a0=yy");  // an override changes what every level expands to
  CHECK(doc.resolve(doc.at("s.a2")).scalar() == std::string(200, 'y'));
}

TEST_CASE("an expansion past limits::max_text or max_expanded is an error at its key",
          "[config][document]") {
  // a7 would be 10^7 bytes; the error names it, also under validate() (--check), where no
  // component reads the section.
  CHECK(error_of([] { cfg::document::parse(fan_out(7, 10), "f.yaml").validate(); }) ==
        "f.yaml:9:7: s.a7: expected a string of at most 1048576 bytes with its ${...} expanded, "
        "got 2000000 bytes or more");
  std::string many;  // 20 strings of 10^6 bytes each: 20 MB in all
  for (int i = 0; i < 20; ++i) many += "c" + std::to_string(i) + ": \"${s.a6}.\"\n";
  auto message = error_of([&] { cfg::document::parse(fan_out(6, 10, many), "f.yaml").validate(); });
  CHECK(message.find(": expected at most 16777216 bytes of expanded ${...} in the whole config, "
                     "got more") != std::string::npos);
  CHECK(error_of([] {
          cfg::document::parse("a: x\nb: ${a}${a}${a}\n", "s.yaml", {.max_text = 2}).validate();
        }) ==
        "s.yaml:2:4: b: expected a string of at most 2 bytes with its ${...} expanded, got "
        "3 bytes or more");
}

TEST_CASE("a truncated or mangled config is a config_error at every cut, never a crash",
          "[config][document]") {
  const std::string good = R"(vars: {steps: 3, name: "run"}
hooks:
  shared: {_target: Counter, params: {label: x}, priority: HIGH, every: 2}
train:
  _target: TrainRunner
  params:
    steps: ${vars.steps}
    hooks:
      - ${ref:hooks.shared}
      - {_target: TwoHandlers, bindings: {start: [on_post_step], step: null}}
)";
  std::size_t errors = 0;
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    for (int variant = 0; variant < 3; ++variant) {
      std::string text = good.substr(0, cut);
      if (variant == 1) text = good.substr(0, cut) + "\x01" + good.substr(cut);
      if (variant == 2) text = good.substr(0, cut) + "{[${" + good.substr(cut);
      try {
        auto doc = cfg::document::parse(text, "cut.yaml");
        doc.validate();
        for (const auto* path :
             {"train.params.steps", "train.params.hooks.0", "hooks.shared.every"})
          if (doc.at("train").is_map()) doc.resolve(doc.at(path));
      } catch (const cfg::config_error& e) {
        ++errors;
        CHECK(std::string(e.what()).starts_with("cut.yaml:"));
      }
    }
  }
  CHECK(errors > 0);
}
