// A class without bindings registered under a hook kind: only hooks can be.
#include "hookforge/config/hooks.hpp"

namespace pts = hookforge::points;

struct TrainCtx {
  int step = 0;
};
namespace hookforge::config::kinds {
using train_hook = hook_kind<TrainCtx>;
}  // namespace hookforge::config::kinds

struct StepCounter {
  int count = 0;
  void on_post_step(TrainCtx&) { ++count; }
#ifndef HOOKFORGE_SHOULD_FAIL
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(on_post_step, pts::on_post_step));
#endif
};

HOOKFORGE_REGISTER(train_hook, StepCounter);

int main() {}
