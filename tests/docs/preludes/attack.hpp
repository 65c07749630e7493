// Prelude of docs/concepts.md's AttackRunner blocks (tests/docs/snippets.py): its points, its
// context and the hooks the page attaches to it.
#pragma once
#include "tests/docs/preludes/core.hpp"

#include <memory>

HOOKFORGE_POINT(on_pre_attack);
HOOKFORGE_POINT(on_post_attack);

struct AttackCtx {
  std::int64_t epoch = 0;
  std::int64_t step = 0;
  double strength = 0.0;
};

struct StrengthSchedule {
  void update(AttackCtx& ctx) { ctx.strength = 0.1 * static_cast<double>(ctx.epoch); }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(update, on_pre_attack));
};
struct Report {
  void print(AttackCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(print, on_post_attack));
};
struct FlipLogger {
  void log(AttackCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, on_pre_attack));
};
