#include <catch2/catch.hpp>

#include <array>

#include "hookforge/core/order.hpp"

using hookforge::detail::order_key;

TEST_CASE("lower priority runs first, then the earlier position", "[order]") {
  using hookforge::detail::runs_before;
  STATIC_REQUIRE(runs_before({10, 5}, {50, 0}));
  STATIC_REQUIRE_FALSE(runs_before({50, 0}, {10, 5}));
  STATIC_REQUIRE(runs_before({50, 1}, {50, 2}));
  STATIC_REQUIRE_FALSE(runs_before({50, 2}, {50, 2}));  // equal keys: neither runs before the other
}

TEST_CASE("a handler joins after its equals, before anything it runs before", "[order]") {
  using hookforge::detail::insertion_index;
  constexpr std::array<order_key, 4> sorted{{{10, 0}, {50, 1}, {50, 3}, {70, 0}}};
  auto at = [&](std::size_t i) { return sorted[i]; };
  CHECK(insertion_index(sorted.size(), {50, 3}, at) == 3);  // an equal attached later
  CHECK(insertion_index(sorted.size(), {50, 2}, at) == 2);
  CHECK(insertion_index(sorted.size(), {0, 9}, at) == 0);
  CHECK(insertion_index(sorted.size(), {100, 0}, at) == 4);
  CHECK(insertion_index(0, {50, 0}, at) == 0);
}

TEST_CASE("a runtime handler can fall between two static ones only where the rule allows",
          "[order]") {
  using hookforge::detail::may_fall_between;
  // Runtime slot at position 2: between static hooks 1 and 3 of equal priority...
  STATIC_REQUIRE(may_fall_between({50, 1}, {50, 3}, 2));
  // ... but not between hooks 0 and 1, nor between 3 and 4.
  STATIC_REQUIRE_FALSE(may_fall_between({50, 0}, {50, 1}, 2));
  STATIC_REQUIRE_FALSE(may_fall_between({50, 3}, {50, 4}, 2));
  // A change of priority always leaves room.
  STATIC_REQUIRE(may_fall_between({30, 0}, {50, 1}, 2));
}
