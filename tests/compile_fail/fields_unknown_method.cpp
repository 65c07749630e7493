// reads<> and writes<> name handlers: a method that is none of the hook's is refused when the
// hook is attached, whether or not the runner says what its batch holds.
#include "common.hpp"

struct LossWatcher {
  void watch(TrainCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(watch, pts::on_post_step));
#ifdef HOOKFORGE_SHOULD_FAIL
  static constexpr auto fields = hookforge::fields(hookforge::reads<"wacth", "loss">{});
#else
  static constexpr auto fields = hookforge::fields(hookforge::reads<"watch", "loss">{});
#endif
};

int main() {
  ValidationRunner runner{LossWatcher{}};
  runner.run();
}
