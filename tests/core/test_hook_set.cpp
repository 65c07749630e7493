#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "hookforge/core/hook_set.hpp"

using namespace fixtures;

TEST_CASE("a hook_set attaches each of its hooks in its place", "[hook_set]") {
  Runner runner{Tagged<'a'>{},
                hookforge::hook_set(Tagged<'b'>{}, Tagged<'c', hookforge::priority::HIGH>{}),
                Tagged<'d'>{}};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  // c first (HIGH), then attach order with the set's members in its place.
  CHECK(ctx.log == std::vector<std::string>{"c", "a", "b", "d"});
  CHECK(runner.hooks().get<2>().priority == hookforge::priority::HIGH);
}

TEST_CASE("a hook_set of refs shares its hooks between runners", "[hook_set]") {
  MultiTarget shared;
  Stateful state;
  auto both = [&] { return hookforge::hook_set(hookforge::ref(shared), hookforge::ref(state)); };
  Runner first{both()};
  Runner second{Tagged<'x'>{}, both()};
  Ctx ctx;
  first.fire<pts::on_post_step>(ctx);
  second.fire<pts::on_post_step>(ctx);
  CHECK(shared.calls == 2);
  CHECK(state.value == 2);
  CHECK(ctx.log == std::vector<std::string>{"x"});
}

TEST_CASE("a hook_set's hooks are in the binding table and keep their state keys", "[hook_set]") {
  Runner runner{hookforge::hook_set(Stateful{}, TwoHandlers{})};
  auto table = runner.hooks().format_table();
  CHECK_THAT(table, Catch::Contains("Stateful"));
  CHECK_THAT(table, Catch::Contains("TwoHandlers"));
  int stateful = 0;
  runner.hooks().for_each_stateful([&](auto, auto&) { ++stateful; });
  CHECK(stateful == 1);
}
