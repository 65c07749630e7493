// A built-in hook on a custom runner whose context lacks a field the hook reads:
// GradientClip needs optimizer_step_due (it clips only before an update), and the
// message names it.
#include <cstdint>
#include <utility>
#include <vector>

#include <hookforge/core/hook_pack.hpp>
#include <hookforge/hooks/gradient_clip.hpp>

namespace pts = hookforge::points;

struct StepCtx {
  torch::optim::Optimizer* optimizer = nullptr;
  std::int64_t optimizer_steps = 0;
  bool optimizer_stepped = false;
#ifndef HOOKFORGE_SHOULD_FAIL
  bool optimizer_step_due = true;
#endif
  bool skip_optimizer_step = false;
  std::vector<torch::Tensor> parameters() const { return optimizer->parameters(); }
};

template <class... Hooks>
class StepRunner {
 public:
  using hook_points = hookforge::point_list<pts::on_post_backward>;
  using Ctx = StepCtx;
  explicit StepRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<StepRunner, Hooks...> hooks_;
};
template <class... H>
StepRunner(H...) -> StepRunner<H...>;

int main() {
  StepRunner runner{hookforge::GradientClip{1.0}};
}
