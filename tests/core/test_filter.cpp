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
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::once(2)), 10) == std::vector<int>{2});
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::once(1, 4, 7)), 10) ==
        std::vector<int>{1, 4, 7});
}

TEST_CASE("before and after are exclusive bounds and combine with every", "[filter]") {
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::before(3)), 6) == std::vector<int>{1, 2});
  CHECK(fired_events(hookforge::when(MultiTarget{}, hookforge::after(4)), 6) == std::vector<int>{5, 6});
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
