// A hook inside a hook_set attached to a runner none of its points belong to: reported
// like the same hook attached on its own, naming the hook and the runner.
#include "common.hpp"
#include "hookforge/core/hook_set.hpp"

struct EpochEnd {
  void done(auto&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(done, pts::on_epoch_end));
};

struct LossLogger {
  void flush_epoch_metrics(auto&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      flush_epoch_metrics,
#ifdef HOOKFORGE_SHOULD_FAIL
      pts::on_trainer_epoch_finished
#else
      pts::on_trainer_epoch_finished, pts::on_epoch_end
#endif
      ));
};

int main() {
  ValidationRunner runner{hookforge::hook_set(EpochEnd{}, LossLogger{})};
  runner.run();
}
