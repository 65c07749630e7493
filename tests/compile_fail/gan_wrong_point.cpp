// A hook bound only to a TrainingEpochRunner point (on_post_backward) attached to a GAN
// runner: no point of the runner matches. The runner below is a torch-free stand-in that
// declares GANTrainingRunner's ten points (include/hookforge/torch/runners/gan_runner.hpp).
#include "common.hpp"

struct GanCtx {
  int d_steps = 0;
};

template <class... Hooks>
class GANRunner {
 public:
  using hook_points =
      hookforge::point_list<pts::on_epoch_start, pts::on_pre_step, pts::on_pre_d_forward, pts::on_post_d_forward,
                            pts::on_post_d_backward, pts::on_pre_g_forward, pts::on_post_g_forward,
                            pts::on_post_g_backward, pts::on_post_step, pts::on_epoch_end>;
  using Ctx = GanCtx;
  static constexpr std::string_view runner_name = "GANTrainingRunner";
  explicit GANRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  void run() {
    Ctx ctx;
    hooks_.template fire<pts::on_post_d_backward>(ctx);
  }

 private:
  hookforge::hook_pack<GANRunner, Hooks...> hooks_;
};
template <class... H>
GANRunner(H...) -> GANRunner<H...>;

struct GradientClip {
  void clip_all_grads(GanCtx& ctx) { ++ctx.d_steps; }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      clip_all_grads,
#ifdef HOOKFORGE_SHOULD_FAIL
      pts::on_post_backward
#else
      pts::on_post_backward, pts::on_post_d_backward  // binds to the one the GAN runner has
#endif
      ));
};

int main() {
  GANRunner runner{GradientClip{}};
  runner.run();
}
