// docs/config.md's example hook, shared by the preludes of its blocks (config, config_register):
// counts the steps it sees, from `start`.
#pragma once
#include <hookforge/hookforge.hpp>

#include <string>
#include <utility>

struct Counter {
  Counter(int start, std::string label = "") : count(start), label(std::move(label)) {}
  void tick(auto&) { ++count; }
  int count;
  std::string label;
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, hookforge::points::on_post_step));
};
