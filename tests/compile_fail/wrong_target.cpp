// A trainer-level hook attached to a runner: no point of the runner matches.
#include "common.hpp"

struct LossLogger {
  void flush_epoch_metrics(auto& ctx);
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      flush_epoch_metrics,
#ifdef HOOKFORGE_SHOULD_FAIL
      pts::on_trainer_epoch_finished
#else
      pts::on_trainer_epoch_finished, pts::on_epoch_end  // binds to the one that exists
#endif
      ));
};
void LossLogger::flush_epoch_metrics(auto&) {}

int main() {
  ValidationRunner runner{LossLogger{}};
  runner.run();
}
