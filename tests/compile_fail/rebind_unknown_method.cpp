// Only declared handlers can be rebound.
#include "common.hpp"

struct Clip {
  void clip_all_grads(TrainCtx&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(clip_all_grads, pts::on_post_backward));
};

int main() {
#ifdef HOOKFORGE_SHOULD_FAIL
  ValidationRunner runner{hookforge::rebind<"clip_grads", pts::on_post_step>(Clip{})};
#else
  ValidationRunner runner{hookforge::rebind<"clip_all_grads", pts::on_post_step>(Clip{})};
#endif
  runner.run();
}
