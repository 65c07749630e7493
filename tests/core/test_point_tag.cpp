// Handlers that take the point tag after the context: told which point fired them.
#include <catch2/catch.hpp>

#include <string>
#include <type_traits>

#include "fixtures.hpp"

using namespace fixtures;
using hookforge::any_hook;

namespace {

/// One generic handler bound to two points, logging the point's name.
struct PointLogger {
  void log(Ctx& ctx, auto point) { ctx.log.push_back(std::string(decltype(point)::name)); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_epoch_start, pts::on_post_step));
};

/// One overload per point it binds to.
struct PerPoint {
  void seen(Ctx& ctx, pts::on_epoch_start) { ctx.log.push_back("start"); }
  void seen(Ctx& ctx, pts::on_post_step) { ctx.log.push_back("step"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(seen, pts::on_epoch_start, pts::on_post_step));
};

/// Tag and no-tag handlers in one hook; `both` can be called either way and is told the point.
struct Mixed {
  void plain(Ctx& ctx) { ctx.log.push_back("plain"); }
  void tagged(Ctx& ctx, pts::on_post_step) { ctx.log.push_back("tagged"); }
  void both(Ctx& ctx) { ctx.log.push_back("both:untold"); }
  void both(Ctx& ctx, auto point) {
    ctx.log.push_back("both:" + std::string(decltype(point)::name));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(plain, pts::on_post_step),
                          HOOKFORGE_HOOKS_INTO(tagged, pts::on_post_step),
                          HOOKFORGE_HOOKS_INTO(both, pts::on_post_step));
};

/// Takes only the tag of on_post_step.
struct StepOnly {
  void log(Ctx& ctx, pts::on_post_step) { ctx.log.push_back("step only"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_post_step));
};

template <class Hook>
using invoker_of = typename hookforge::detail::type_at_t<0, hookforge::bindings_of<Hook>>::invoker;

}  // namespace

TEST_CASE("a handler bound to two points is told which one fired", "[point_tag]") {
  Runner runner{PointLogger{}, PerPoint{}};
  Ctx ctx;
  runner.fire<pts::on_epoch_start>(ctx);
  runner.fire<pts::on_post_step>(ctx);
  runner.fire<on_pre_attack>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"on_epoch_start", "start", "on_post_step", "step"});
}

TEST_CASE("tag and no-tag handlers mix in one hook, the tag is preferred", "[point_tag]") {
  Runner runner{Mixed{}, Tagged<'t'>{}};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"plain", "tagged", "both:on_post_step", "t"});
}

TEST_CASE("the attach check tests a handler with the point it would be told", "[point_tag]") {
  using hookforge::detail::handler_callable_at;
  STATIC_REQUIRE(handler_callable_at<invoker_of<StepOnly>, StepOnly, Ctx, pts::on_post_step>);
  STATIC_REQUIRE(!handler_callable_at<invoker_of<StepOnly>, StepOnly, Ctx, pts::on_epoch_start>);
  STATIC_REQUIRE(handler_callable_at<invoker_of<PointLogger>, PointLogger, Ctx, on_pre_attack>);
  // The point of the report: rebinding StepOnly to a second point is refused at attach.
  using Rebound =
      decltype(hookforge::rebind<"log", pts::on_post_step, pts::on_epoch_start>(StepOnly{}));
  using report = hookforge::detail::attach_report<Runner<Rebound>, Rebound>;
  STATIC_REQUIRE(!report::callable);
  STATIC_REQUIRE(std::is_same_v<report::uncallable_point, pts::on_epoch_start>);
}

TEST_CASE("wrappers pass the point tag through", "[point_tag]") {
  PointLogger shared;
  auto filtered = hookforge::when<"seen">(PerPoint{}, hookforge::every(2));
  auto moved = hookforge::rebind<"log", on_pre_attack>(PointLogger{});
  Runner runner{hookforge::ref(shared), filtered, moved, hookforge::with_priority<0>(StepOnly{})};
  Ctx ctx;
  runner.fire<pts::on_epoch_start>(ctx);  // ref; `seen` counts its first event
  runner.fire<pts::on_post_step>(ctx);    // StepOnly first (priority 0), ref; `seen` runs (2nd)
  runner.fire<on_pre_attack>(ctx);        // the rebound handler, told its new point
  CHECK(ctx.log == std::vector<std::string>{"on_epoch_start", "step only", "on_post_step", "step",
                                            "on_pre_attack"});
}

TEST_CASE("runtime: a point-taking handler is told the point by name", "[point_tag][runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  runner.hooks().attach(any_hook<Ctx>(PointLogger{}));
  runner.hooks().attach(any_hook<Ctx>(PerPoint{}));
  runner.hooks().attach(any_hook<Ctx>(Mixed{}));
  Ctx ctx;
  runner.fire<pts::on_epoch_start>(ctx);
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"on_epoch_start", "start", "on_post_step", "step",
                                            "plain", "tagged", "both:on_post_step"});
}

TEST_CASE("runtime: handlers taking the context alone keep one trampoline",
          "[point_tag][runtime]") {
  const any_hook<Ctx> hook(Mixed{});
  const auto& handlers = hook.erased().handlers;
  REQUIRE(handlers.size() == 3);
  CHECK(handlers[0].call != nullptr);
  CHECK(handlers[0].point_calls.empty());
  CHECK(handlers[1].call == nullptr);  // `tagged` needs the tag
  CHECK(handlers[1].call_at("on_post_step") != nullptr);
  CHECK(handlers[1].call_at("on_epoch_start") == nullptr);
  CHECK(handlers[2].call != nullptr);  // `both` also runs untold, where its point is unknown
  CHECK(handlers[2].call_at("on_post_step") != handlers[2].call);
  CHECK(handlers[2].call_at("on_pre_attack") == handlers[2].call);
  // Declared points and the built-in ones, each once.
  CHECK(handlers[2].point_calls.size() == hookforge::points::builtin::size);
}

TEST_CASE("runtime: a remap to a built-in point tells the handler that point",
          "[point_tag][runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  hookforge::hook_options options;
  options.bindings["log"] = {"on_post_step"};
  auto moved = hookforge::rebind<"log", on_pre_attack>(PointLogger{});
  runner.hooks().attach(any_hook<Ctx>(moved, options));
  options.bindings["both"] = {"on_pre_attack"};  // unknown to Mixed: it runs untold there
  options.bindings.erase("log");
  runner.hooks().attach(any_hook<Ctx>(Mixed{}, options));
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  runner.fire<on_pre_attack>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"on_post_step", "plain", "tagged", "both:untold"});
}

TEST_CASE("runtime: a declared custom point is told, through rebind and when too",
          "[point_tag][runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  runner.hooks().attach(any_hook<Ctx>(hookforge::rebind<"log", on_pre_attack>(PointLogger{})));
  runner.hooks().attach(any_hook<Ctx>(hookforge::when(PerPoint{}, hookforge::once(1))));
  Ctx ctx;
  runner.fire<on_pre_attack>(ctx);
  runner.fire<pts::on_epoch_start>(ctx);
  runner.fire<pts::on_post_step>(ctx);  // `seen`'s second event: once(1) skips it
  CHECK(ctx.log == std::vector<std::string>{"on_pre_attack", "start"});
}

TEST_CASE("runtime: a remap to a point the hook cannot know is an error for a tag-only handler",
          "[point_tag][runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  hookforge::hook_options options;
  options.bindings["log"] = {"on_pre_attack"};
  CHECK_THROWS_WITH(runner.hooks().attach(any_hook<Ctx>(PointLogger{}, options)),
                    Catch::Contains("PointLogger::log takes the point tag") &&
                        Catch::Contains("point on_pre_attack of TestRunner"));
  // Known type, wrong tag: the usual message.
  options.bindings["log"] = {"on_epoch_start"};
  CHECK_THROWS_WITH(runner.hooks().attach(any_hook<Ctx>(StepOnly{}, options)),
                    Catch::Contains("StepOnly::log cannot be called with the context of "
                                    "TestRunner at point on_epoch_start"));
}
