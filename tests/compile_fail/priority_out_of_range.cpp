// Priorities live in [0, 100].
#include "common.hpp"

struct Probe {
  void look(TrainCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
};

int main() {
#ifdef HOOKFORGE_SHOULD_FAIL
  ValidationRunner runner{hookforge::with_priority<150>(Probe{})};
#else
  ValidationRunner runner{hookforge::with_priority<hookforge::priority::LOWEST>(Probe{})};
#endif
  runner.run();
}
