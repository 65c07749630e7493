// A misspelled point is an undeclared type.
#include "common.hpp"

struct Probe {
  void look(TrainCtx&) {}
#ifdef HOOKFORGE_SHOULD_FAIL
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_stpe));
#else
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
#endif
};

int main() {
  ValidationRunner runner{Probe{}};
  runner.run();
}
