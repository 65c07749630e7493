// A handler written for another runner's context.
#include "common.hpp"

struct GanCtx {
  int d_steps = 0;
};

struct DiscriminatorProbe {
#ifdef HOOKFORGE_SHOULD_FAIL
  void look(GanCtx& ctx) { ++ctx.d_steps; }
#else
  void look(TrainCtx& ctx) { ++ctx.step; }
#endif
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
};

int main() {
  ValidationRunner runner{DiscriminatorProbe{}};
  runner.run();
}
