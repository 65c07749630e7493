// attach() on a runner constructed without a runtime_hooks slot.
#include "common.hpp"

struct StepCounter {
  void count(TrainCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

int main() {
#ifdef HOOKFORGE_SHOULD_FAIL
  ValidationRunner runner{StepCounter{}};
#else
  ValidationRunner runner{StepCounter{}, hookforge::runtime_hooks{}};
#endif
  runner.hooks().attach(hookforge::any_hook<TrainCtx>(StepCounter{}));
  runner.run();
}
