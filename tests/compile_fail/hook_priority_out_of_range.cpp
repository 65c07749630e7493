// A hook's own priority is checked too.
#include "common.hpp"

struct Eager {
#ifdef HOOKFORGE_SHOULD_FAIL
  static constexpr int priority = -5;
#else
  static constexpr int priority = hookforge::priority::HIGHEST;
#endif
  void look(TrainCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
};

int main() {
  ValidationRunner runner{Eager{}};
  runner.run();
}
