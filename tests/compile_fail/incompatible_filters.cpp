// Ignite's rule: once() stands alone.
#include "common.hpp"

struct Probe {
  void look(TrainCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
};

int main() {
#ifdef HOOKFORGE_SHOULD_FAIL
  ValidationRunner runner{hookforge::when(Probe{}, hookforge::once(3), hookforge::every(2))};
#else
  ValidationRunner runner{hookforge::when(Probe{}, hookforge::every(2), hookforge::after(3))};
#endif
  runner.run();
}
