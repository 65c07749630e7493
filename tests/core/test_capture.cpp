// Capture safety: which hooks a runner that records points in a CUDA graph accepts.
#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;
using hookforge::any_hook;

namespace {

/// A runner that replays on_post_step from a CUDA graph (its other points run eagerly).
template <class... Hooks>
class GraphedRunner {
 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_post_step>;
  using captured_points = hookforge::point_list<pts::on_post_step>;
  using Ctx = fixtures::Ctx;
  static constexpr std::string_view runner_name = "GraphedRunner";
  explicit GraphedRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<GraphedRunner, Hooks...> hooks_;
};
template <class... H>
GraphedRunner(H...) -> GraphedRunner<H...>;

struct DeviceOnly {  // says it is capture-safe
  static constexpr bool capture_safe = true;
  void step(Ctx& ctx) { ++ctx.counter; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};
struct Printer {  // says nothing: not capture-safe
  void step(Ctx&) {}
  void start(Ctx&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(start, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};
struct EpochOnly {  // not capture-safe, but bound only where the runner runs eagerly
  void start(Ctx&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(start, pts::on_epoch_start));
};

}  // namespace

TEST_CASE("capture safety is what a hook declares, false by default", "[capture]") {
  STATIC_REQUIRE(hookforge::capture_safe_of<DeviceOnly>());
  STATIC_REQUIRE_FALSE(hookforge::capture_safe_of<Printer>());
  STATIC_REQUIRE(hookforge::captured_points_of<GraphedRunner<>>::size == 1);
  STATIC_REQUIRE(hookforge::captured_points_of<Runner<>>::size == 0);
}

TEST_CASE("wrappers keep the inner hook's capture safety, and an event filter has none",
          "[capture]") {
  auto safe = DeviceOnly{};
  STATIC_REQUIRE(hookforge::capture_safe_of<decltype(hookforge::ref(safe))>());
  STATIC_REQUIRE(hookforge::capture_safe_of<decltype(hookforge::keyed<"k">(DeviceOnly{}))>());
  STATIC_REQUIRE(
      hookforge::capture_safe_of<decltype(hookforge::with_priority<10>(DeviceOnly{}))>());
  STATIC_REQUIRE(hookforge::capture_safe_of<decltype(hookforge::enabled_if(DeviceOnly{}, true))>());
  STATIC_REQUIRE(hookforge::capture_safe_of<decltype(hookforge::rebind<"step", pts::on_epoch_start>(
                     DeviceOnly{}))>());
  // every(n) counts on the host: a replay would not count, so the filter is refused.
  STATIC_REQUIRE_FALSE(
      hookforge::capture_safe_of<decltype(hookforge::when(DeviceOnly{}, hookforge::every(2)))>());
  STATIC_REQUIRE_FALSE(
      hookforge::capture_safe_of<decltype(hookforge::ref(std::declval<Printer&>()))>());
}

TEST_CASE("a graphed runner takes capture-safe hooks, and any hook at its eager points",
          "[capture]") {
  GraphedRunner runner{DeviceOnly{}, EpochOnly{}, hookforge::runtime_hooks{}};
  runner.hooks().attach(any_hook<Ctx>(DeviceOnly{}));
  runner.hooks().attach(any_hook<Ctx>(EpochOnly{}));
  Ctx ctx;
  runner.hooks().fire<pts::on_post_step>(ctx);
  CHECK(ctx.counter == 2);
}

TEST_CASE("a config-loaded hook that is not capture-safe is refused where the runner captures",
          "[capture]") {
  GraphedRunner runner{hookforge::runtime_hooks{}};
  CHECK_THROWS_WITH(
      runner.hooks().attach(any_hook<Ctx>(Printer{})),
      "hookforge: handler Printer::step runs at on_post_step, which GraphedRunner records in a "
      "CUDA graph and replays, and Printer is not capture-safe (it declares no `static constexpr "
      "bool capture_safe = true`). Attach it to a runner that does not capture");
  // Rebound away from the captured point, the same hook is welcome.
  hookforge::hook_options options;
  options.bindings["step"] = {};
  runner.hooks().attach(any_hook<Ctx>(Printer{}, options));
  CHECK(runner.hooks().binds<pts::on_epoch_start>());
  CHECK_FALSE(runner.hooks().binds<pts::on_post_step>());
  // A runner that captures nothing takes it as it is.
  Runner plain{hookforge::runtime_hooks{}};
  CHECK_NOTHROW(plain.hooks().attach(any_hook<Ctx>(Printer{})));
}
