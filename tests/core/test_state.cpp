#include <catch2/catch.hpp>

#include <map>

#include "fixtures.hpp"

using namespace fixtures;

TEST_CASE("hooks with state_dict/load_state_dict are recognised", "[state]") {
  STATIC_REQUIRE(hookforge::stateful<Stateful>);
  STATIC_REQUIRE_FALSE(hookforge::stateful<TwoHandlers>);
  STATIC_REQUIRE_FALSE(hookforge::stateful<hookforge::ref_hook<TwoHandlers>>);
  STATIC_REQUIRE(hookforge::stateful<hookforge::ref_hook<Stateful>>);
}

TEST_CASE("state keys default to the type name, keyed() overrides", "[state]") {
  STATIC_REQUIRE(hookforge::state_key_of<Stateful>() == "fixtures::Stateful");
  STATIC_REQUIRE(hookforge::state_key_of<hookforge::keyed_hook<"fast", Stateful>>() == "fast");
  STATIC_REQUIRE(hookforge::state_key_of<hookforge::ref_hook<Stateful>>() == "fixtures::Stateful");
}

TEST_CASE("a pack visits its stateful hooks with their keys", "[state]") {
  Runner runner{hookforge::keyed<"fast">(Stateful{}), TwoHandlers{},
                hookforge::keyed<"slow">(Stateful{})};
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  std::map<std::string, int> saved;
  runner.hooks().for_each_stateful(
      [&](std::string_view key, auto& hook) { saved[std::string(key)] = hook.state_dict(); });
  CHECK(saved == std::map<std::string, int>{{"fast", 1}, {"slow", 1}});
  runner.hooks().for_each_stateful([&](std::string_view, auto& hook) { hook.load_state_dict(7); });
  CHECK(runner.hooks().get<0>().state_dict() == 7);
}

TEST_CASE("runtime hooks: state is reachable and duplicate keys are an error", "[state]") {
  Runner runner{hookforge::keyed<"ema">(Stateful{}), hookforge::runtime_hooks{}};
  CHECK_THROWS_WITH(runner.hooks().attach(hookforge::any_hook<Ctx>(Stateful{}, {.key = "ema"})),
                    Catch::Contains("share the state key 'ema'"));
  runner.hooks().attach(hookforge::any_hook<Ctx>(Stateful{}, {.key = "other"}));
  CHECK_THROWS_WITH(runner.hooks().attach(hookforge::any_hook<Ctx>(Stateful{}, {.key = "other"})),
                    Catch::Contains("share the state key 'other'"));
  auto states = runner.hooks().runtime().states();
  REQUIRE(states.size() == 1);
  CHECK(states[0].key == "other");
  CHECK(std::any_cast<int>(states[0].save(states[0].object)) == 0);
  states[0].load(states[0].object, std::any(5));
  CHECK(std::any_cast<int>(states[0].save(states[0].object)) == 5);
}
