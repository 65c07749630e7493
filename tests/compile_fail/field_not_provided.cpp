// A handler reads a batch field that the runner's batch does not hold where the handler runs,
// and that no handler writes earlier: the message names hook, method, field, point and runner.
#include "fields_common.hpp"

struct SrLogger {
  void log(StepCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_post_step));
#ifdef HOOKFORGE_SHOULD_FAIL
  static constexpr auto fields = hookforge::fields(hookforge::reads<"log", "lr", "output">{});
#else
  static constexpr auto fields = hookforge::fields(hookforge::reads<"log", "output">{});
#endif
};

int main() {
  TrainingLoop runner{SrLogger{}};
  runner.run();
}
