// A small torch-free domain for the config tests: two runners with their own contexts,
// a component kind that builds them with their hooks, a shape kind for object
// references, and a few hooks. Registered in registrations.cpp (another TU).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/config.hpp"
#include "hookforge/hookforge.hpp"

namespace cfg_fixtures {

namespace pts = hookforge::points;

struct TrainCtx {
  std::vector<std::string> log;
  int steps = 0;
};
struct ValCtx {
  std::vector<std::string> log;
};

/// The training runner; `Graphed`: one that records on_post_backward in a CUDA graph, as
/// far as the attach checks know (capture safety).
template <bool Graphed, class... Hooks>
class BasicTrainRunner {
 public:
  using hook_points =
      hookforge::point_list<pts::on_epoch_start, pts::on_post_backward, pts::on_post_step>;
  using captured_points = std::conditional_t<Graphed, hookforge::point_list<pts::on_post_backward>,
                                             hookforge::point_list<>>;
  using Ctx = TrainCtx;
  static constexpr std::string_view runner_name = Graphed ? "GraphedTrainRunner" : "TrainRunner";
  explicit BasicTrainRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  template <class P>
  void fire(Ctx& ctx) {
    hooks_.template fire<P>(ctx);
  }
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<BasicTrainRunner, Hooks...> hooks_;
};
template <class... Hooks>
using TrainRunner = BasicTrainRunner<false, Hooks...>;

template <class... Hooks>
class ValRunner {
 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_post_step>;
  using Ctx = ValCtx;
  static constexpr std::string_view runner_name = "ValRunner";
  explicit ValRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  template <class P>
  void fire(Ctx& ctx) {
    hooks_.template fire<P>(ctx);
  }
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<ValRunner, Hooks...> hooks_;
};

using train_runner = TrainRunner<hookforge::runtime_hooks>;
using graphed_train_runner = BasicTrainRunner<true, hookforge::runtime_hooks>;
using val_runner = ValRunner<hookforge::runtime_hooks>;

/// What the component kind builds.
struct component {
  virtual ~component() = default;
  /// Fire on_epoch_start once, then (on_post_backward and) on_post_step `steps` times.
  virtual std::vector<std::string> run() = 0;
  virtual std::string table() = 0;
};

template <class Runner>
struct BasicTrainComponent : component {
  Runner runner{hookforge::runtime_hooks{}};
  int steps;
  BasicTrainComponent(hookforge::config::hook_list<Runner> hooks, int steps_) : steps(steps_) {
    hookforge::config::attach_all(runner.hooks(), hooks);
  }
  std::vector<std::string> run() override {
    TrainCtx ctx;
    runner.template fire<pts::on_epoch_start>(ctx);
    for (int i = 0; i < steps; ++i) {
      runner.template fire<pts::on_post_backward>(ctx);
      runner.template fire<pts::on_post_step>(ctx);
    }
    return ctx.log;
  }
  std::string table() override { return runner.hooks().format_table(); }
};
using TrainComponent = BasicTrainComponent<train_runner>;
using GraphedTrainComponent = BasicTrainComponent<graphed_train_runner>;

struct ValComponent : component {
  val_runner runner{hookforge::runtime_hooks{}};
  int steps;
  ValComponent(hookforge::config::hook_list<val_runner> hooks, int steps_) : steps(steps_) {
    hookforge::config::attach_all(runner.hooks(), hooks);
  }
  std::vector<std::string> run() override {
    ValCtx ctx;
    runner.fire<pts::on_epoch_start>(ctx);
    for (int i = 0; i < steps; ++i) runner.fire<pts::on_post_step>(ctx);
    return ctx.log;
  }
  std::string table() override { return runner.hooks().format_table(); }
};

/// Shapes: an object kind whose entries reference each other.
struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};
struct Square : Shape {
  double side;
  explicit Square(double s) : side(s) {
    if (s < 0) throw std::invalid_argument("Square: side must be >= 0, got " + std::to_string(s));
  }
  double area() const override { return side * side; }
};
struct Scaled : Shape {
  std::shared_ptr<Shape> inner;
  double factor;
  Scaled(std::shared_ptr<Shape> i, double f) : inner(std::move(i)), factor(f) {}
  double area() const override { return inner->area() * factor; }
};
struct Group : Shape {
  std::vector<std::shared_ptr<Shape>> parts;
  explicit Group(std::vector<std::shared_ptr<Shape>> p) : parts(std::move(p)) {}
  double area() const override {
    double a = 0;
    for (const auto& s : parts) a += s->area();
    return a;
  }
};

/// Counts on_post_step in either context; `label` tags its log lines.
struct Counter {
  int count = 0;
  std::string label;
  Counter(int start, std::string l) : count(start), label(std::move(l)) {}
  void tick(auto& ctx) {
    ++count;
    ctx.log.push_back(label);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, pts::on_post_step));
};

/// A Counter whose class acts on rank 0 only by default (HOOKFORGE_RANK_ZERO_ONLY, as a writer).
struct RankZeroCounter : Counter {
  using Counter::Counter;
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, pts::on_post_step));
};

/// Two handlers, for bindings remaps.
struct TwoHandlers {
  void start(auto& ctx) { ctx.log.push_back("start"); }
  void step(auto& ctx) { ctx.log.push_back("step"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(start, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};

/// A handler that only a TrainCtx satisfies (it reads `steps`).
struct TrainOnly {
  template <class C>
    requires requires(C& c) { c.steps; }
  void tick(C& ctx) {
    ctx.steps += 1;
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, pts::on_post_step));
};

/// Binds to a point only TrainRunner has: under ValRunner, SR-Forge's warning.
struct AfterBackward {
  void seen(auto& ctx) { ctx.log.push_back("backward"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(seen, pts::on_post_backward));
};

/// Registered for TrainCtx only.
struct TrainCtxOnly {
  void tick(TrainCtx& ctx) { ctx.log.push_back("train-only"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, pts::on_post_step));
};

/// Options aggregate, with a constructor that checks them.
struct clip_options {
  double max_norm = 0;
  int norm_type = 2;
  std::vector<std::string> groups{};
  std::optional<double> cap{};
  bool enabled = true;
  std::string watch = "";          ///< names a score, known only once built (field_spec::naming)
  double limit = 1;                ///< may be .inf (field_spec::allowing_infinity)
  std::filesystem::path out = {};  ///< written to (field_spec::output_path)
};
struct Clip {
  clip_options options;
  explicit Clip(clip_options o) : options(std::move(o)) {
    if (options.max_norm <= 0)
      throw std::invalid_argument("Clip: max_norm must be > 0, got " +
                                  std::to_string(options.max_norm));
  }
  void clip(auto& ctx) { ctx.log.push_back("clip"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(clip, pts::on_post_backward));
  static constexpr int priority = hookforge::priority::HIGH;
};

/// Stateful: two of them on one runner need distinct keys.
struct Stateful {
  int value = 0;
  void bump(auto&) { ++value; }
  int state_dict() const { return value; }
  void load_state_dict(int v) { value = v; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(bump, pts::on_post_step));
};

/// Takes every kind of scalar and container parameter.
struct Recorder {
  std::int64_t big;
  std::uint8_t small;
  float ratio;
  bool flag;
  std::vector<int> sizes;
  std::map<std::string, double> weights;
  std::optional<int> maybe;
  Recorder(std::int64_t b, std::uint8_t s, float r, bool f, std::vector<int> z,
           std::map<std::string, double> w, std::optional<int> m)
      : big(b), small(s), ratio(r), flag(f), sizes(std::move(z)), weights(std::move(w)), maybe(m) {}
  void step(auto& ctx) { ctx.log.push_back("rec"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};

/// A hook with a constructor argument that is a path it writes to (arg::output_path).
struct Writer {
  std::filesystem::path dir;
  explicit Writer(std::filesystem::path d) : dir(std::move(d)) {}
  void step(auto& ctx) { ctx.log.push_back("write"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};

}  // namespace cfg_fixtures

HOOKFORGE_DECLARE_KIND(test_component, cfg_fixtures::component);
HOOKFORGE_DECLARE_KIND(shape, cfg_fixtures::Shape);
namespace hookforge::config::kinds {
using test_hook = hook_kind<cfg_fixtures::TrainCtx, cfg_fixtures::ValCtx>;
using train_hook = hook_kind<cfg_fixtures::TrainCtx>;
}  // namespace hookforge::config::kinds
