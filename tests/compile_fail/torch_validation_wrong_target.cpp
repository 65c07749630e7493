// A training-only hook attached to a built-in validation runner: the report must point at
// this file's line, where the runner is constructed, not at the library's runner header.
#include <hookforge/torch.hpp>

namespace pts = hookforge::points;

struct GradNormLogger {
  void log_grad_norm(hookforge::InferenceContext&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      log_grad_norm,
#ifdef HOOKFORGE_SHOULD_FAIL
      pts::on_post_backward
#else
      pts::on_post_backward, pts::on_epoch_end  // binds to a point the validation runner has
#endif
      ));
};

int main() {
  hookforge::ValidationEpochRunner runner({}, GradNormLogger{});
}
