// A handler reads a field another hook writes, but at a point that fires before the writer's:
// the field is not there yet. Read after the writer (the twin), it is.
#include "fields_common.hpp"

struct Upsampler {
  void upsample(StepCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(upsample, pts::on_post_forward));
  static constexpr auto fields = hookforge::fields(hookforge::writes<"upsample", "sr">{});
};

struct SrViewer {
  void view(StepCtx&) {}
#ifdef HOOKFORGE_SHOULD_FAIL
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(view, pts::on_pre_step));
#else
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(view, pts::on_post_step));
#endif
  static constexpr auto fields = hookforge::fields(hookforge::reads<"view", "sr">{});
};

int main() {
  TrainingLoop runner{SrViewer{}, Upsampler{}};
  runner.run();
}
