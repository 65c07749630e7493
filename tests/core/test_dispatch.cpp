#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;
using namespace hookforge::priority;

TEST_CASE("handlers run by priority, lower first", "[dispatch]") {
  Runner runner{Tagged<'c', LOW>{}, Tagged<'a', HIGHEST>{}, Tagged<'b', NORMAL>{}};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("equal priorities keep attach order", "[dispatch]") {
  Runner runner{Tagged<'x'>{}, Tagged<'y'>{}, Tagged<'a', HIGH>{}, Tagged<'z'>{}};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"a", "x", "y", "z"});
}

TEST_CASE("the attach call's priority wins over the hook's own", "[dispatch]") {
  Runner runner{Tagged<'a', HIGHEST>{}, hookforge::with_priority<VERY_HIGH>(Tagged<'b', LOWEST>{}),
                hookforge::with_priority<HIGHEST>(Tagged<'c'>{})};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"a", "c", "b"});
}

TEST_CASE("the static order is computed at compile time", "[dispatch]") {
  constexpr auto order =
      hookforge::detail::dispatch_order<hookforge::points_of<Runner<>>, pts::on_post_step,
                                        Tagged<'a', LOW>, TwoHandlers, Tagged<'b', HIGH>>();
  STATIC_REQUIRE(order.size() == 3);
  STATIC_REQUIRE(order[0].hook == 2);  // HIGH
  STATIC_REQUIRE(order[1].hook == 1);  // TwoHandlers::step, NORMAL
  STATIC_REQUIRE(order[1].binding == 1);
  STATIC_REQUIRE(order[2].hook == 0);  // LOW
}

TEST_CASE("a point with no handler fires nothing", "[dispatch]") {
  Runner runner{Tagged<'a'>{}};
  Ctx ctx;
  runner.fire<on_pre_attack>(ctx);
  CHECK(ctx.log.empty());
}

TEST_CASE("the binding table lists every point and its handlers in order", "[dispatch][table]") {
  Runner runner{Tagged<'a'>{}, hookforge::with_priority<HIGH>(TwoHandlers{})};
  auto rows = runner.hooks().table();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].point == "on_epoch_start");
  CHECK(rows[0].method == "start");
  CHECK(rows[1].point == "on_post_step");
  CHECK(rows[1].hook == "TwoHandlers");
  CHECK(rows[1].priority == HIGH);
  CHECK(rows[2].hook == "Tagged");
  auto text = runner.hooks().format_table();
  CHECK(text.find("TestRunner") == 0);
  CHECK(text.find("HIGH (30)          TwoHandlers::step") != std::string::npos);
  CHECK(text.find("on_pre_attack") != std::string::npos);  // unbound points show too
}

TEST_CASE("a runner without hooks fires nothing and lists every point", "[dispatch]") {
  Runner<> empty;
  Runner<hookforge::runtime_hooks> only_runtime{hookforge::runtime_hooks{}};
  Ctx ctx;
  empty.fire<pts::on_post_step>(ctx);
  only_runtime.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log.empty());
  CHECK(empty.hooks().table().empty());
  CHECK(empty.hooks().format_table() ==
        "TestRunner\n  on_epoch_start               -\n  on_post_step                 -\n  "
        "on_pre_attack                -\n");
}

TEST_CASE("the pack keeps each hook's state and finds it by index or type", "[dispatch]") {
  Runner runner{MultiTarget{}, TwoHandlers{}};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  runner.fire<on_pre_attack>(ctx);
  CHECK(runner.hooks().get<0>().calls == 2);
  CHECK(&runner.hooks().get<MultiTarget>() == &runner.hooks().get<0>());
  CHECK(&runner.hooks().get<TwoHandlers>() == &runner.hooks().get<1>());
  STATIC_REQUIRE(std::is_same_v<decltype(runner.hooks().get<1>()), TwoHandlers&>);
}
