// A config-loaded hook made for another runner's context.
#include "common.hpp"

struct GanCtx {
  int d_steps = 0;
};

struct StepCounter {
  void count(auto& ctx) { (void)ctx; }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

int main() {
  ValidationRunner runner{hookforge::runtime_hooks{}};
#ifdef HOOKFORGE_SHOULD_FAIL
  runner.hooks().attach(hookforge::any_hook<GanCtx>(StepCounter{}));
#else
  runner.hooks().attach(hookforge::any_hook<TrainCtx>(StepCounter{}));
#endif
  runner.run();
}
