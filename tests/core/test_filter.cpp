#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;

namespace {
/// Fires a runner's on_post_step n times; returns the events (1-based) at which the hook ran.
template <class Hook>
std::vector<int> fired_events(Hook hook, int n) {
  Runner runner{std::move(hook)};
  std::vector<int> events;
  Ctx ctx;
  for (int e = 1; e <= n; ++e) {
    int before = ctx.counter;
    runner.template fire<pts::on_post_step>(ctx);
    if (ctx.counter != before) events.push_back(e);
  }
  return events;
}
}  // namespace

TEST_CASE("every(n) fires when e % n == 0", "[filter]") {
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::every(3)), 10) ==
        std::vector<int>{3, 6, 9});
}

TEST_CASE("once fires at the listed events only", "[filter]") {
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::once(2)), 10) ==
        std::vector<int>{2});
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::once(1, 4, 7)), 10) ==
        std::vector<int>{1, 4, 7});
}

TEST_CASE("before and after are exclusive bounds and combine with every", "[filter]") {
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::before(3)), 6) ==
        std::vector<int>{1, 2});
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::after(4)), 6) ==
        std::vector<int>{5, 6});
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::every(2), hookforge::after(2),
                                     hookforge::before(9)),
                     12) == std::vector<int>{4, 6, 8});
}

TEST_CASE("a filter can apply to one handler only", "[filter]") {
  Runner runner{hookforge::when<"step">(TwoHandlers{}, hookforge::every(2))};
  Ctx ctx;
  for (int i = 0; i < 4; ++i) {
    runner.fire<pts::on_epoch_start>(ctx);
    runner.fire<pts::on_post_step>(ctx);
  }
  CHECK(std::count(ctx.log.begin(), ctx.log.end(), "start") == 4);
  CHECK(std::count(ctx.log.begin(), ctx.log.end(), "step") == 2);
}

TEST_CASE("incompatible filters given at run time are rejected", "[filter]") {
  using hookforge::event_filter;
  CHECK_THROWS_WITH(event_filter::make(2, {3}, std::nullopt, std::nullopt),
                    Catch::Contains("once() cannot be combined"));
  CHECK_THROWS_WITH(event_filter::make(std::nullopt, {1}, 5, std::nullopt),
                    Catch::Contains("once() cannot be combined"));
  CHECK_THROWS_WITH(event_filter::make(0, {}, std::nullopt, std::nullopt),
                    Catch::Contains("must be positive"));
  auto ok = event_filter::make(5, {}, std::nullopt, 10);
  CHECK(ok.passes(15));
  CHECK_FALSE(ok.passes(10));
  CHECK_FALSE(ok.passes(12));
}

TEST_CASE("event counts are visible for checkpoints, statically and at run time",
          "[filter][state]") {
  STATIC_REQUIRE(hookforge::counted<hookforge::filtered_hook<MultiTarget>>);
  STATIC_REQUIRE(hookforge::counted<hookforge::ref_hook<hookforge::filtered_hook<MultiTarget>>>);
  STATIC_REQUIRE_FALSE(hookforge::counted<MultiTarget>);

  Runner runner{hookforge::when(MultiTarget{}, hookforge::every(3)), hookforge::runtime_hooks{}};
  runner.hooks().attach(hookforge::any_hook<Ctx>(
      hookforge::when(TwoHandlers{}, hookforge::every(2)), {.key = "two"}));
  Ctx ctx;
  for (int i = 0; i < 4; ++i) runner.fire<pts::on_post_step>(ctx);

  std::vector<std::int64_t> counts;
  runner.hooks().for_each_counted(
      [&](std::string_view, auto& hook) { counts = hook.event_counts(); });
  CHECK(counts == std::vector<std::int64_t>{4});
  auto dynamic = runner.hooks().runtime().counted();
  REQUIRE(dynamic.size() == 1);
  CHECK(dynamic[0].key == "two");
  CHECK(dynamic[0].save(dynamic[0].object) == std::vector<std::int64_t>{0, 4});  // start, step

  // Restored counts continue: after 5, the next event is 6, which every(3) admits.
  runner.hooks().for_each_counted(
      [&](std::string_view, auto& hook) { hook.set_event_counts({5}); });
  int before = ctx.counter;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.counter == before + 1);
  CHECK_THROWS_WITH(dynamic[0].load(dynamic[0].object, {1}),
                    Catch::Contains("1 event counts given for a hook with 2"));
}
