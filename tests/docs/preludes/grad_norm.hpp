// Prelude of docs/config.md's hookforge::run::main block (tests/docs/snippets.py): the hook it
// registers (examples/user_hook_run/main.cpp has a whole one).
#pragma once
#include <hookforge/run.hpp>

#include <cstdint>

struct GradNorm {
  explicit GradNorm(std::int64_t every) : every(every) {}
  template <class C>
  void log(C&) {}
  std::int64_t every;
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, hookforge::points::on_post_backward));
};
