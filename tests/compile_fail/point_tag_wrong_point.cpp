// A handler that takes one point's tag, bound to a second point the runner has: it cannot be
// told that point, which the check names.
#include "common.hpp"

struct StepTimer {
  void time(TrainCtx&, pts::on_post_step) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(time,
#ifdef HOOKFORGE_SHOULD_FAIL
                                                                            pts::on_epoch_start,
#endif
                                                                            pts::on_post_step));
};

int main() {
  ValidationRunner runner{StepTimer{}};
  runner.run();
}
