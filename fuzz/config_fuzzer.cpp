// libFuzzer target for the config loader (docs/config.md, "Fuzzing the config loader").
//
// Each input is used three ways:
//   1. the whole input as a config file: document::parse, a builder over it, then every
//      top-level entry read as each kind and value type the test domain has;
//   2. its first line as a `--set` override of a fixed, valid config, then the same reads;
//   3. its first line as a `--set` override of the rest of the input parsed as a config.
// A hookforge::config::config_error is the expected outcome of a bad input. Any other
// exception aborts with its type and message (libFuzzer records the input as a crash), as
// do the sanitizers' reports, timeouts and memory past -rss_limit_mb.
//
// The registrations are the config tests' (tests/config/registrations.cpp): two runners
// with hook lists, an object kind referencing itself (shapes), hooks with options, filters
// and state.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "fixtures.hpp"

namespace {

namespace cfg = hookforge::config;
using namespace cfg_fixtures;

/// Components are run only up to this many steps (a fuzzed `steps: 2000000000` is no bug).
constexpr int max_steps = 16;
/// Top-level entries (and children of each) read per document.
constexpr std::size_t max_entries = 32;
/// The loader's limits, with a tenth of the default node count: tests/config/bad/alias_bomb.yaml
/// reaches the default million visits in about 0.6 s of an optimised build and in more than
/// the fuzzer's 5 s timeout under ASan and UBSan. The limit is checked the same way at any value.
constexpr cfg::limits bounds{.max_nodes = 100'000};

constexpr std::string_view fixed_config = R"(vars:
  steps: 2
  label: shared
  dir: /tmp/${vars.label}
  escaped: $${not.a.ref}
hooks:
  counter: {_target: Counter, params: {label: "${vars.label}", start: 1}}
  clip: &clip {_target: Clip, params: {max_norm: 1.0, groups: [a, b], cap: null}, priority: HIGH}
  filtered: {_target: Stateful, every: 2, key: filtered}
shapes:
  unit: {_target: Square, params: {side: 2}}
  tile: {_target: Tile, params: {half_of: 6}}
  scaled: {_target: Scaled, params: {inner: "${ref:shapes.unit}", factor: 3}}
shape:
  _target: Group
  params: {parts: ["${ref:shapes.unit}", "${ref:shapes.scaled}", {_target: Square, params: {side: 1}}]}
train:
  _target: TrainRunner
  params:
    steps: ${vars.steps}
    hooks:
      - ${ref:hooks.counter}
      - ${ref:hooks.clip}
      - ${ref:hooks.filtered}
      - {_target: TwoHandlers, bindings: {start: on_post_step, step: null}, priority: 10}
      - {_target: Recorder, params: {big: 9000000000, small: 255, ratio: .5, flag: true, sizes: [1, 2], weights: {a: 0.5}, maybe: 3}}
      - {_target: Counter, once: [1, 3]}
val:
  _target: ValRunner
  params:
    steps: 1
    hooks: ["${ref:hooks.counter}", {_target: AfterBackward}, {_target: Counter, before: 3, after: 1}]
copy: *clip
)";

/// Run `f`; a config_error is an expected outcome.
template <class F>
void expecting_config_errors(F&& f) {
  try {
    f();
  } catch (const cfg::config_error&) {
  }
}

void run_component(const std::shared_ptr<component>& c) {
  if (!c) return;
  int steps = 0;
  if (auto* t = dynamic_cast<TrainComponent*>(c.get())) steps = t->steps;
  if (auto* v = dynamic_cast<ValComponent*>(c.get())) steps = v->steps;
  if (steps <= max_steps) (void)c->run();
  (void)c->table();
}

/// Read the value at `path` as the kinds and value types its shape may hold: an entry
/// (mapping) as each object kind, a list as lists, a scalar as each scalar type; a
/// `${...}` (whatever it resolves to) as all of them. Objects are built and components
/// run. Each wrong guess is a config_error, which costs an exception: reading every type
/// at every path ran 1.75 times fewer inputs per second on the same corpus. A Shape's
/// area is not computed: a Group of ${ref}s to Groups is a DAG whose area the fixture
/// computes in exponential time.
void read_everything(cfg::builder& b, const std::string& path, const cfg::value& v) {
  const bool any = v.is_scalar() && v.scalar().find("${") != std::string::npos;
  if (any || v.is_map()) {
    expecting_config_errors([&] { run_component(b.get<std::shared_ptr<component>>(path)); });
    expecting_config_errors([&] { (void)b.get<std::shared_ptr<Shape>>(path); });
    expecting_config_errors([&] { (void)b.get<cfg::hook_handle>(path); });
    expecting_config_errors([&] { (void)b.get<std::map<std::string, std::vector<int>>>(path); });
  }
  if (any || v.is_sequence() || v.is_null()) {
    expecting_config_errors([&] {
      TrainComponent c(b.get<cfg::hook_list<train_runner>>(path), 2);
      run_component(std::shared_ptr<component>(&c, [](component*) {}));
    });
    expecting_config_errors([&] {
      ValComponent c(b.get<cfg::hook_list<val_runner>>(path), 2);
      run_component(std::shared_ptr<component>(&c, [](component*) {}));
    });
    expecting_config_errors([&] { (void)b.get<std::vector<std::optional<double>>>(path); });
    expecting_config_errors([&] { (void)b.get<std::vector<std::shared_ptr<Shape>>>(path); });
  }
  if (any || v.is_scalar() || v.is_null()) {
    expecting_config_errors([&] { (void)b.get<bool>(path); });
    expecting_config_errors([&] { (void)b.get<int>(path); });
    expecting_config_errors([&] { (void)b.get<std::int64_t>(path); });
    expecting_config_errors([&] { (void)b.get<std::uint8_t>(path); });
    expecting_config_errors([&] { (void)b.get<std::uint64_t>(path); });
    expecting_config_errors([&] { (void)b.get<float>(path); });
    expecting_config_errors([&] { (void)b.get<double>(path); });
    expecting_config_errors([&] { (void)b.get<std::string>(path); });
    expecting_config_errors([&] { (void)b.get<std::filesystem::path>(path); });
    expecting_config_errors([&] { (void)b.get<cfg::priority_level>(path); });
    expecting_config_errors([&] { (void)b.get<std::optional<std::string>>(path); });
  }
}

/// Build a builder over `doc` and read every top-level entry and its children.
void build_and_read(cfg::document doc, bool strict) {
  std::optional<cfg::builder> b;
  expecting_config_errors([&] { b.emplace(std::move(doc), cfg::build_options{.strict = strict}); });
  if (!b) return;
  std::size_t entries = 0;
  for (const auto& item : b->doc().root().items()) {
    if (++entries > max_entries) break;
    (void)b->has(item.name);
    read_everything(*b, item.name, item.val);
    std::size_t children = 0;
    for (const auto& child : item.val.items()) {
      if (++children > max_entries) break;
      read_everything(*b, item.name + "." + child.name, child.val);
    }
    auto elements = item.val.elements();
    for (std::size_t i = 0; i < elements.size() && i < max_entries; ++i)
      read_everything(*b, item.name + "." + std::to_string(i), elements[i]);
  }
}

/// Any exception but a config_error is a bug: say which, and abort so libFuzzer keeps the input.
[[noreturn]] void unexpected(const char* what, const char* type) {
  std::fprintf(stderr, "hookforge_config_fuzzer: unexpected exception %s: %s\n", type, what);
  std::abort();
}

template <class F>
void guarded(F&& f) {
  try {
    f();
  } catch (const cfg::config_error&) {
  } catch (const std::exception& e) {
    unexpected(e.what(), typeid(e).name());
  } catch (...) {
    unexpected("(not a std::exception)", "unknown");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  hookforge::set_warning_sink([](std::string_view) {});  // SR-Forge's warnings are expected
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  bool strict = size % 2 == 1;

  // 1. The whole input as a config file.
  guarded([&] { build_and_read(cfg::document::parse(input, "fuzz.yaml", bounds), strict); });

  auto newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  auto first_line = input.substr(0, newline);
  auto rest = input.substr(newline + 1);

  // 2. The first line as --set on the fixed config.
  guarded([&] {
    auto doc = cfg::document::parse(fixed_config, "fixed.yaml", bounds);
    doc.set(first_line);
    build_and_read(std::move(doc), strict);
  });

  // 3. The first line as --set on the rest of the input.
  guarded([&] {
    auto doc = cfg::document::parse(rest, "fuzz.yaml", bounds);
    doc.set(first_line);
    build_and_read(std::move(doc), strict);
  });
  return 0;
}
