// Building objects from configs: the registries, parameters, ${ref} sharing, and hooks
// listed under components (priority, bindings, filters, contexts, warnings).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <unistd.h>

#include "helpers.hpp"

using namespace cfg_fixtures;
namespace cfg = hookforge::config;
using strings = std::vector<std::string>;

namespace {
template <class H>
std::shared_ptr<H> hook_object(const run& r, std::string_view path) {
  // Shared instances are the objects the handles hold (unfiltered entries).
  return std::static_pointer_cast<H>(r.b->get<cfg::hook_handle>(path).object());
}
}  // namespace

TEST_CASE("registries list their kinds, entries and parameters", "[config][registry]") {
  auto& shapes = cfg::registry<std::shared_ptr<Shape>>::instance();
  CHECK(shapes.kind() == "shape");
  auto names = shapes.names();
  for (const auto* n : {"Group", "Scaled", "Square", "Tile"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  const auto* scaled = shapes.find("Scaled");
  REQUIRE(scaled);
  REQUIRE(scaled->params.size() == 2);
  CHECK(scaled->params[0].name == "inner");
  CHECK(scaled->params[0].type == "a shape");
  CHECK(scaled->params[0].required);
  CHECK(scaled->params[1].fallback == "1");
  CHECK(scaled->site.find("registrations.cpp:") != std::string::npos);

  const auto* clip = cfg::registry<cfg::hook_handle>::instance().find("Clip");
  REQUIRE(clip);
  REQUIRE(clip->params.size() == 8);
  CHECK(clip->params[0].required);
  CHECK(clip->params[1].fallback == "2");
  CHECK(clip->params[2].type == "a list of string");
  CHECK(clip->params[3].type == "a number or null");
  CHECK(clip->params[7].type == "a path in the work directory");
  const auto* writer = cfg::registry<cfg::hook_handle>::instance().find("Writer");
  REQUIRE(writer);
  CHECK(writer->params[0].type == "a path in the work directory");
  CHECK(writer->params[0].fallback == "\"logs\"");

  const auto* recorder = cfg::registry<cfg::hook_handle>::instance().find("Recorder");
  REQUIRE(recorder);
  CHECK(recorder->params[3].fallback == "false");
  CHECK(recorder->params[4].fallback == "[]");
  CHECK(recorder->params[5].fallback == "{}");
  CHECK(recorder->params[6].fallback == "null");

  // value_traits<tint> is specialised after register.hpp: a trait, so the order is moot.
  const auto* tinted = shapes.find("Tinted");
  REQUIRE(tinted);
  CHECK(tinted->params[0].fallback == "blue");
  CHECK(tinted->params[1].fallback == "[red, blue]");

  std::vector<std::string_view> kinds;
  for (const auto* r : cfg::registries()) kinds.push_back(r->kind());
  CHECK(std::find(kinds.begin(), kinds.end(), "hook") != kinds.end());
  CHECK(std::find(kinds.begin(), kinds.end(), "test_component") != kinds.end());
}

TEST_CASE("a name registered by two classes is an error when a config names it",
          "[config][registry]") {
  struct Other : Shape {
    double area() const override { return 0; }
  };
  cfg::detail::register_entry<cfg::kinds::shape, Square>("Twice", __FILE__, __LINE__,
                                                         cfg::arg<double>("side"));
  cfg::detail::register_entry<cfg::kinds::shape, Other>("Twice", __FILE__, __LINE__);
  cfg::detail::register_entry<cfg::kinds::shape, Square>("Twice", __FILE__, __LINE__,
                                                         cfg::arg<double>("side"));
  auto message = error_of("shape: {_target: Twice, params: {side: 1}}");
  CHECK(message.find(
            "shape._target: expected a shape name registered once, got 'Twice', registered by "
            "cfg_fixtures::Square and ") != std::string::npos);
}

TEST_CASE("${ref} shares one object, and inline entries and factories build", "[config][refs]") {
  auto r = build_text(R"(
shapes:
  unit: {_target: Square, params: {side: 2}}
  tile: {_target: Tile, params: {half_of: 6}}
shape:
  _target: Group
  params:
    parts:
      - ${ref:shapes.unit}
      - ${ref:shapes.unit}
      - {_target: Scaled, params: {inner: "${ref:shapes.unit}", factor: 3}}
      - ${ref:shapes.tile}
)");
  REQUIRE(r.shape);
  CHECK(r.shape->area() == Approx(4 + 4 + 12 + 9));
  auto group = std::dynamic_pointer_cast<Group>(r.shape);
  REQUIRE(group);
  CHECK(group->parts[0] == group->parts[1]);
  CHECK(std::dynamic_pointer_cast<Scaled>(group->parts[2])->inner == group->parts[0]);
  CHECK(r.b->get<std::shared_ptr<Shape>>("shapes.unit") == group->parts[0]);
  CHECK(r.b->get<std::shared_ptr<Shape>>("shape") == r.shape);  // built once
}

TEST_CASE("a hook referenced from two components is one instance counting both",
          "[config][refs][hooks]") {
  auto r = build_text(R"(
hooks:
  counter: {_target: Counter, params: {label: shared}}
train:
  _target: TrainRunner
  params: {steps: 3, hooks: ["${ref:hooks.counter}"]}
val:
  _target: ValRunner
  params: {steps: 2, hooks: ["${ref:hooks.counter}"]}
)");
  CHECK(r.train->run() == strings{"shared", "shared", "shared"});
  CHECK(r.val->run() == strings{"shared", "shared"});
  CHECK(hook_object<Counter>(r, "hooks.counter")->count == 5);
}

TEST_CASE("bindings remap, list and disable handlers, SR-Forge's place in params works too",
          "[config][hooks]") {
  auto r = build_text(R"(
train:
  _target: TrainRunner
  params:
    steps: 2
    hooks:
      - {_target: TwoHandlers, bindings: {start: on_post_step, step: null}}
      - _target: TwoHandlers
        params:
          bindings: {start: [on_epoch_start, on_post_backward], step: []}
)");
  CHECK(r.train->run() == strings{"start", "start", "start", "start", "start"});
}

TEST_CASE("priority by level name or number orders the hooks of a point", "[config][hooks]") {
  auto r = build_text(R"(
train:
  _target: TrainRunner
  params:
    steps: 1
    hooks:
      - {_target: Counter, params: {label: a}, priority: LOW}
      - {_target: Counter, params: {label: b}, priority: HIGH}
      - {_target: Counter, params: {label: c}, priority: 45}
      - {_target: Counter, params: {label: d}}
      - {_target: Clip, params: {max_norm: 1}}
)");
  CHECK(r.train->run() == strings{"clip", "b", "c", "d", "a"});
  auto table = r.train->table();
  CHECK(table.find("HIGH (30)") != std::string::npos);
  CHECK(table.find("LOW (70)") != std::string::npos);
}

TEST_CASE("event filters every, once, before, after on any hook entry", "[config][hooks]") {
  auto r = build_text(R"(
hooks:
  shared: {_target: Counter, params: {label: s}, every: 3}
train:
  _target: TrainRunner
  params:
    steps: 6
    hooks:
      - {_target: Counter, params: {label: every2}, every: 2}
      - {_target: Counter, params: {label: once}, once: [1, 5]}
      - {_target: Counter, params: {label: window}, after: 2, before: 5}
      - ${ref:hooks.shared}
val:
  _target: ValRunner
  params: {steps: 3, hooks: ["${ref:hooks.shared}"]}
)");
  auto log = r.train->run();
  auto count = [&](std::string_view label) { return std::count(log.begin(), log.end(), label); };
  CHECK(count("every2") == 3);
  CHECK(count("once") == 2);
  CHECK(count("window") == 2);          // events 3 and 4
  CHECK(count("s") == 2);               // events 3 and 6 of this runner
  CHECK(r.val->run() == strings{"s"});  // one instance, its count goes on: events 7-9, 9 passes
}

TEST_CASE("rank_zero_only hooks act on rank 0 only, and an entry overrides its class's default",
          "[config][hooks]") {
  constexpr std::string_view text = R"(
train:
  _target: TrainRunner
  params:
    steps: 2
    hooks:
      - {_target: RankZeroCounter, params: {label: writer}}
      - {_target: Counter, params: {label: everywhere}}
      - {_target: Counter, params: {label: mine}, rank_zero_only: true}
      - {_target: RankZeroCounter, params: {label: forced}, rank_zero_only: false}
)";
  auto rank0 = build_text(text, {}, {.rank = 0});
  CHECK(rank0.train->run() == strings{"writer", "everywhere", "mine", "forced", "writer",
                                      "everywhere", "mine", "forced"});
  auto rank1 = build_text(text, {}, {.rank = 1});
  CHECK(rank1.train->run() == strings{"everywhere", "forced", "everywhere", "forced"});
  // dist::rank_zero_only's policy: a silenced hook keeps its bindings, so the tables agree.
  CHECK(rank1.train->table() == rank0.train->table());
  const std::string filtered = R"(
train:
  _target: TrainRunner
  params:
    steps: 4
    hooks: [{_target: RankZeroCounter, params: {label: w}, every: 2}]
)";
  CHECK(build_text(filtered, {}, {.rank = 0}).train->run() == strings{"w", "w"});
  CHECK(build_text(filtered, {}, {.rank = 1}).train->run().empty());
  CHECK(build_text(filtered, {}, {.rank = 1}).train->table() ==
        build_text(filtered, {}, {.rank = 0}).train->table());
  // Silenced hooks are still checked as written: a bad point is an error on every rank.
  CHECK_THAT(error_of(R"(
train:
  _target: TrainRunner
  params: {hooks: [{_target: RankZeroCounter, bindings: {tick: on_post_stpe}}]}
)",
                      {}, {.rank = 1}),
             Catch::Matchers::Contains("on_post_stpe"));
  CHECK_THAT(error_of(R"(
train: {_target: TrainRunner, params: {hooks: [{_target: Counter, rank_zero_only: maybe}]}}
)"),
             Catch::Matchers::Contains("rank_zero_only: expected a boolean"));
}

TEST_CASE("every parameter type reads, defaults and optionals", "[config][params]") {
  auto r = build_text(R"(
hooks:
  rec:
    _target: Recorder
    params: {big: -9000000000, small: 255, ratio: .5, flag: true, sizes: [1, 2], weights: {l1: 0.5, mse: 2}}
  rec2: {_target: Recorder}
  clip: {_target: Clip, params: {max_norm: 0.5, groups: [g, h], cap: null}}
train:
  _target: TrainRunner
  params: {hooks: ["${ref:hooks.rec}", "${ref:hooks.rec2}", "${ref:hooks.clip}"]}
)");
  auto rec = hook_object<Recorder>(r, "hooks.rec");
  CHECK(rec->big == -9000000000);
  CHECK(rec->small == 255);
  CHECK(rec->ratio == 0.5f);
  CHECK(rec->flag);
  CHECK(rec->sizes == std::vector<int>{1, 2});
  CHECK(rec->weights == std::map<std::string, double>{{"l1", 0.5}, {"mse", 2.0}});
  CHECK(!rec->maybe);
  auto rec2 = hook_object<Recorder>(r, "hooks.rec2");
  CHECK(rec2->big == 0);
  CHECK(!rec2->flag);
  auto clip = hook_object<Clip>(r, "hooks.clip");
  // `watch` not given: its default is noted, not written, at the key it would have
  REQUIRE(r.b->named_references().size() == 1);
  CHECK_FALSE(r.b->named_references()[0].written);
  CHECK(r.b->named_references()[0].key == "hooks.clip.params.watch");
  CHECK(r.b->named_references()[0].name.empty());
  CHECK(clip->options.max_norm == 0.5);
  CHECK(clip->options.norm_type == 2);
  CHECK(clip->options.groups == strings{"g", "h"});
  CHECK(!clip->options.cap);
}

TEST_CASE("numbers are finite unless a field allows infinity, .nan never", "[config][params]") {
  auto clip_with = [](std::string params) {
    return "hooks:\n  clip: {_target: Clip, params: {" + params +
           "}}\ntrain: {_target: TrainRunner, params: {hooks: [\"${ref:hooks.clip}\"]}}\n";
  };
  CHECK(error_of(clip_with("max_norm: .inf"))
            .ends_with("hooks.clip.params.max_norm: expected a finite number, got '.inf'"));
  CHECK(error_of(clip_with("max_norm: 1, cap: -.inf"))
            .ends_with("hooks.clip.params.cap: expected a finite number, got '-.inf'"));
  CHECK(error_of(clip_with("max_norm: 1, limit: .nan"))
            .ends_with("hooks.clip.params.limit: expected a number or .inf, got '.nan'"));
  CHECK(error_of("shape: {_target: Square, params: {side: .NaN}}\n")
            .ends_with("shape.params.side: expected a finite number, got '.NaN'"));
  auto r = build_text(clip_with("max_norm: 1, limit: .inf"));
  CHECK(std::isinf(hook_object<Clip>(r, "hooks.clip")->options.limit));
}

TEST_CASE("a field that names something built later is noted with its place", "[config][params]") {
  auto r = build_text(R"(
hooks:
  clip: {_target: Clip, params: {max_norm: 1, watch: "${names.score}"}}
names: {score: psnr}
train: {_target: TrainRunner, params: {hooks: ["${ref:hooks.clip}"]}}
)");
  CHECK(hook_object<Clip>(r, "hooks.clip")->options.watch == "psnr");
  const auto& noted = r.b->named_references();
  REQUIRE(noted.size() == 1);
  CHECK(noted[0].what == "a test score");
  CHECK(noted[0].name == "psnr");
  CHECK(noted[0].key == "hooks.clip.params.watch");
  CHECK(noted[0].where.line == 3);
}

TEST_CASE("an output path is taken under the output directory and kept inside it",
          "[config][params]") {
  namespace fs = std::filesystem;
  const auto root = fs::temp_directory_path() / fmt::format("hf-output-path-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root / "run");
  fs::create_directories(root / "elsewhere");
  fs::create_directory_symlink(root / "elsewhere", root / "run" / "link");
  const auto run = root / "run";
  const hookforge::config::build_options inside{.output_dir = run};
  const auto text = [](std::string clip_out, std::string writer_dir) {
    return "hooks:\n  clip: {_target: Clip, params: {max_norm: 1, out: " + clip_out +
           "}}\n  writer: {_target: Writer, params: {dir: " + writer_dir +
           "}}\ntrain: {_target: TrainRunner, params: {hooks: [\"${ref:hooks.clip}\", "
           "\"${ref:hooks.writer}\"]}}\n";
  };
  auto r = build_text(text("ckpt/./best", "a/../logs"), {}, inside);
  CHECK(hook_object<Clip>(r, "hooks.clip")->options.out == run / "ckpt" / "best");
  CHECK(hook_object<cfg_fixtures::Writer>(r, "hooks.writer")->dir == run / "logs");
  auto absolute = build_text(text((run / "abs").string(), "x"), {}, inside);
  CHECK(hook_object<Clip>(absolute, "hooks.clip")->options.out == run / "abs");

  const auto refused = [&](std::string clip_out, std::string writer_dir, std::string key) {
    const auto message = error_of(text(clip_out, writer_dir), {}, inside);
    INFO(message);
    CHECK(message.find(key + ": expected a path inside the run's output directory '" +
                       run.string() + "'") != std::string::npos);
    CHECK(message.find("--allow-outside-output") != std::string::npos);
    CHECK(message.find("outside it") != std::string::npos);
  };
  refused("../elsewhere", "logs", "hooks.clip.params.out");
  refused("/tmp", "logs", "hooks.clip.params.out");
  refused("ok", "link/logs", "hooks.writer.params.dir");  // a symlink that leads out
  refused("ok", "../run2", "hooks.writer.params.dir");

  auto allowed = build_text(text("/tmp", "../elsewhere"), {},
                            {.output_dir = run, .paths_outside_output = true});
  CHECK(hook_object<Clip>(allowed, "hooks.clip")->options.out == "/tmp");
  CHECK(hook_object<cfg_fixtures::Writer>(allowed, "hooks.writer")->dir == root / "elsewhere");
  auto unplaced = build_text(text("../x", "/tmp"));  // no output directory: as written
  CHECK(hook_object<Clip>(unplaced, "hooks.clip")->options.out == "../x");
  auto fallback = build_text(text("\"\"", "\"\""), {}, inside);  // empty: the class's place
  CHECK(hook_object<Clip>(fallback, "hooks.clip")->options.out.empty());
  fs::remove_all(root);
}

TEST_CASE("set overrides (--set) parameters and is located when wrong", "[config][set]") {
  const char* text = R"(
train:
  _target: TrainRunner
  params:
    steps: 1
    hooks: [{_target: Clip, params: {max_norm: 1}}]
)";
  auto r = build_text(text, {"train.params.steps=3", "train.params.hooks.0.params.max_norm=0.25"});
  CHECK(r.train->run().size() == 3);
  CHECK(error_of(text, {"train.params.steps=ten"}) ==
        "<--set train.params.steps=ten>:1:20: train.params.steps: expected an integer in "
        "[-2147483648, "
        "2147483647], got 'ten'");
  CHECK(error_of(text, {"train.params.stpes=3"}) ==
        "<--set train.params.stpes=3>:1:1: train.params.stpes: expected a parameter of TrainRunner "
        "(hooks, "
        "steps), got 'stpes' (closest: steps)");
  CHECK(error_of(text, {"train.params.hooks.0.params.max_norm=-1"})
            .find("train.params.hooks[0].params: expected parameters that Clip accepts, got "
                  "\"Clip: max_norm "
                  "must be > 0") != std::string::npos);
}

TEST_CASE(
    "a hook none of whose handlers can fire on its component warns with its location (strict: an "
    "error)",
    "[config][hooks]") {
  // One case, two causes: no matching point, or a context the hook is not registered for.
  struct wrong_target {
    std::string hook, warning, error;
  };
  const wrong_target cases[] = {
      {"AfterBackward",
       "Hook AfterBackward declares handler method(s) (['seen']) but ValRunner exposes no matching "
       "HookPoint. Was "
       "this hook attached to the wrong target?",
       "expected a hook that binds to points of ValRunner, got Hook AfterBackward declares handler "
       "method(s) "
       "(['seen']) but ValRunner exposes no matching HookPoint. Was this hook attached to the "
       "wrong target?"},
      {"TrainCtxOnly",
       "Hook TrainCtxOnly is registered for cfg_fixtures::TrainCtx, but ValRunner runs with "
       "cfg_fixtures::ValCtx: "
       "none of its handlers can fire there, so it is left out. Was this hook attached to the "
       "wrong target? "
       "(Register it for that context with HOOKFORGE_HOOK_CONTEXTS.)",
       "expected a hook registered for the context of ValRunner (cfg_fixtures::ValCtx), got hook "
       "TrainCtxOnly, "
       "registered for cfg_fixtures::TrainCtx (register it for that context with "
       "HOOKFORGE_HOOK_CONTEXTS)"},
  };
  for (const auto& c : cases) {
    INFO(c.hook);
    const std::string text =
        "val:\n  _target: ValRunner\n  params:\n    hooks:\n      - _target: " + c.hook +
        "\n      - {_target: Counter, bindings: {tick: [on_post_step, on_post_d_backward]}}\n";
    {
      hookforge::capture_warnings warnings;
      auto r = build_text(text);
      REQUIRE(warnings.messages.size() == 1);
      CHECK(warnings.messages[0] == "test.yaml:5:9: val.params.hooks[0]: " + c.warning);
      CHECK(r.val->run() == strings{"c"});  // the Counter alone
    }
    CHECK(error_of(text, {}, {.strict = true}) == "test.yaml:5:9: val.params.hooks[0]: " + c.error);
  }
}

TEST_CASE(
    "a hook that is not capture-safe, at a point the runner records in a CUDA graph, is an "
    "error at its line",
    "[config][hooks][capture]") {
  CHECK(error_of(R"(
train:
  _target: GraphedTrainRunner
  params:
    hooks:
      - _target: Counter
      - _target: AfterBackward
)") == "test.yaml:7:9: train.params.hooks[1]: expected a hook whose handlers GraphedTrainRunner "
       "can call, got handler AfterBackward::seen runs at on_post_backward, which "
       "GraphedTrainRunner records in a CUDA graph and replays, and AfterBackward is not "
       "capture-safe (it declares no `static constexpr bool capture_safe = true`). Attach it to a "
       "runner that does not capture");
  // Moved off the recorded point, it runs where the runner runs eagerly.
  auto r = build_text(R"(
train:
  _target: GraphedTrainRunner
  params:
    hooks: [{_target: AfterBackward, bindings: {seen: [on_post_step]}}]
)");
  CHECK(r.train->run() == strings{"backward"});
}

TEST_CASE("a state key set in the config separates two stateful hooks", "[config][hooks]") {
  auto r = build_text(R"(
train:
  _target: TrainRunner
  params:
    hooks: [{_target: Stateful}, {_target: Stateful, key: second}]
)");
  CHECK(r.train);
}

TEST_CASE("a hook under a component of another context names hook and component",
          "[config][hooks]") {
  auto message = error_of(R"(
hooks:
  t: {_target: TrainOnly}
train: {_target: TrainRunner, params: {hooks: ["${ref:hooks.t}"]}}
val: {_target: ValRunner, params: {hooks: ["${ref:hooks.t}"]}}
)");
  CHECK(message ==
        "test.yaml:5:44: val.params.hooks[0]: expected a hook whose handlers ValRunner can call, "
        "got handler "
        "TrainOnly::tick cannot be called with the context of ValRunner at point on_post_step");
}
