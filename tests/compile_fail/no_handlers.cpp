// A hook that binds nothing: a method named like a point is not a handler.
#include "common.hpp"

struct Forgetful {
  void on_post_step(TrainCtx&) {}
#ifndef HOOKFORGE_SHOULD_FAIL
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(on_post_step, pts::on_post_step));
#endif
};

int main() {
  ValidationRunner runner{Forgetful{}};
  runner.run();
}
