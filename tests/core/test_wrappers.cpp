#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;

TEST_CASE("ref attaches one instance to several runners", "[wrappers]") {
  MultiTarget shared;
  Runner first{hookforge::ref(shared)};
  Runner second{hookforge::ref(shared), Tagged<'a'>{}};
  Ctx ctx;
  first.fire<pts::on_post_step>(ctx);
  second.fire<pts::on_post_step>(ctx);
  second.fire<on_pre_attack>(ctx);
  CHECK(shared.calls == 3);
}

TEST_CASE("attachment is the scope: a hook fires only from its runner", "[wrappers]") {
  MultiTarget shared;
  Runner with{hookforge::ref(shared)};
  Runner without{Tagged<'a'>{}};
  Ctx ctx;
  without.fire<pts::on_post_step>(ctx);
  CHECK(shared.calls == 0);
  with.fire<pts::on_post_step>(ctx);
  CHECK(shared.calls == 1);
}

TEST_CASE("rebind moves a handler to other points", "[wrappers]") {
  auto moved = hookforge::rebind<"step", pts::on_epoch_start>(TwoHandlers{});
  constexpr auto pairs = hookforge::list_bindings<decltype(moved)>();
  STATIC_REQUIRE(pairs.size() == 2);
  STATIC_REQUIRE(pairs[1].point == "on_epoch_start");

  Runner runner{std::move(moved)};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log.empty());
  runner.fire<pts::on_epoch_start>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"start", "step"});
}

TEST_CASE("rebind to no point disables a default binding", "[wrappers]") {
  Runner runner{hookforge::unbind<"start">(TwoHandlers{}), hookforge::rebind<"mark">(Tagged<'z'>{}),
                Tagged<'a'>{}};
  Ctx ctx;
  runner.fire<pts::on_epoch_start>(ctx);
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"step", "a"});
}

TEST_CASE("wrappers compose and report the wrapped hook's name", "[wrappers]") {
  Stateful state;
  auto hook = hookforge::with_priority<hookforge::priority::LOW>(
      hookforge::rebind<"bump", pts::on_epoch_start>(hookforge::ref(state)));
  STATIC_REQUIRE(hookforge::priority_of<decltype(hook)>() == hookforge::priority::LOW);
  STATIC_REQUIRE(hookforge::hook_name<decltype(hook)>() == "Stateful");
  STATIC_REQUIRE(hookforge::stateful<decltype(hook)>);
  Runner runner{std::move(hook)};
  Ctx ctx;
  runner.fire<pts::on_epoch_start>(ctx);
  CHECK(state.value == 1);
}
