// A generic handler constrained on what it reads: a context without that field is refused.
#include "common.hpp"

struct GradNormLogger {
  void log(auto& ctx)
#ifdef HOOKFORGE_SHOULD_FAIL
    requires requires { ctx.grad_norm; }
  { (void)ctx.grad_norm; }
#else
    requires requires { ctx.step; }
  { (void)ctx.step; }
#endif
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_post_step));
};

int main() {
  ValidationRunner runner{GradNormLogger{}};
  runner.run();
}
