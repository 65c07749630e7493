#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;

TEST_CASE("points carry their name at compile time", "[points]") {
  STATIC_REQUIRE(pts::on_post_backward::name == "on_post_backward");
  STATIC_REQUIRE(on_pre_attack::name == "on_pre_attack");
  STATIC_REQUIRE(hookforge::point<pts::on_epoch_end>);
  STATIC_REQUIRE_FALSE(hookforge::point<int>);
}

TEST_CASE("point_list is a type list with lookups", "[points]") {
  using list = hookforge::point_list<pts::on_epoch_start, on_pre_attack>;
  STATIC_REQUIRE(list::size == 2);
  STATIC_REQUIRE(list::contains<on_pre_attack>);
  STATIC_REQUIRE_FALSE(list::contains<pts::on_post_step>);
  STATIC_REQUIRE(list::index_of<on_pre_attack> == 1);
  STATIC_REQUIRE(list::index_of<pts::on_post_step> == 2);
  STATIC_REQUIRE(list::names[0] == "on_epoch_start");
}

TEST_CASE("runner names come from runner_name or the type", "[points]") {
  STATIC_REQUIRE(hookforge::runner_name<Runner<>>() == "TestRunner");
  STATIC_REQUIRE(hookforge::short_name("ns::Outer<int, ns::X>") == "Outer");
}

TEST_CASE("priority levels follow MMEngine's scale", "[points]") {
  using namespace hookforge::priority;
  STATIC_REQUIRE(HIGHEST == 0);
  STATIC_REQUIRE(VERY_HIGH == 10);
  STATIC_REQUIRE(HIGH == 30);
  STATIC_REQUIRE(ABOVE_NORMAL == 40);
  STATIC_REQUIRE(NORMAL == 50);
  STATIC_REQUIRE(BELOW_NORMAL == 60);
  STATIC_REQUIRE(LOW == 70);
  STATIC_REQUIRE(VERY_LOW == 90);
  STATIC_REQUIRE(LOWEST == 100);
  STATIC_REQUIRE(from_name("ABOVE_NORMAL") == 40);
  STATIC_REQUIRE_FALSE(from_name("URGENT").has_value());
  CHECK(name_of(30) == "HIGH");
  CHECK(name_of(35) == "35");
}
