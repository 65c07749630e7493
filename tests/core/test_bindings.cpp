#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;
using hookforge::method_point;

TEST_CASE("list_bindings is constexpr and lists (method, point) pairs", "[bindings]") {
  constexpr auto pairs = hookforge::list_bindings<MultiTarget>();
  STATIC_REQUIRE(pairs.size() == 3);
  STATIC_REQUIRE(pairs[0] == method_point{"count", "on_post_step"});
  STATIC_REQUIRE(pairs[1] == method_point{"count", "on_post_d_backward"});
  STATIC_REQUIRE(pairs[2] == method_point{"count", "on_pre_attack"});

  constexpr auto two = hookforge::list_bindings<TwoHandlers>();
  STATIC_REQUIRE(two.size() == 2);
  STATIC_REQUIRE(two[0] == method_point{"start", "on_epoch_start"});
  STATIC_REQUIRE(two[1] == method_point{"step", "on_post_step"});
}

TEST_CASE("a method named like a point is not a handler", "[bindings]") {
  // MultiTarget::on_post_step throws if called; only `count` is bound.
  Runner runner{MultiTarget{}};
  Ctx ctx;
  REQUIRE_NOTHROW(runner.fire<pts::on_post_step>(ctx));
  CHECK(ctx.counter == 1);
}

TEST_CASE("one method binds to every listed point the runner declares", "[bindings]") {
  Runner runner{MultiTarget{}};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  runner.fire<on_pre_attack>(ctx);
  runner.fire<pts::on_epoch_start>(ctx);  // not listed by the hook
  CHECK(ctx.counter == 2);
  CHECK(runner.hooks().get<0>().calls == 2);
}

namespace {
struct NotABindingList {
  static constexpr int bindings = 3;  // not made by hookforge::bindings()
};
}  // namespace

TEST_CASE("hooks without bindings and empty bindings are detected", "[bindings]") {
  struct None {};
  STATIC_REQUIRE_FALSE(hookforge::has_bindings<None>);
  STATIC_REQUIRE_FALSE(hookforge::has_bindings<NotABindingList>);
  STATIC_REQUIRE(hookforge::has_bindings<TwoHandlers>);
  STATIC_REQUIRE(hookforge::bindings_of<TwoHandlers>::size == 2);
}
