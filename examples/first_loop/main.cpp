// Route A of docs/getting-started.md: keep your own LibTorch training loop and give it hook
// points. The loop below is ordinary LibTorch; what hookforge adds is a runner (the points the
// loop fires and the context it passes), the hooks it holds, and two fire<Point>(ctx) calls.
#include <hookforge/hookforge.hpp>
#include <hookforge/hooks/gradient_clip.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include <fmt/core.h>

namespace pts = hookforge::points;

// What every hook receives at every point. `epoch`, `step` and `loss` are for hooks of your
// own; the model, the optimiser fields and parameters() are what GradientClip reads (docs/hooks.md
// lists what each built-in hook needs; a missing field is a compile error naming it).
struct StepContext {
  std::int64_t epoch = 0;
  std::int64_t step = 0;
  torch::Tensor loss;
  torch::nn::Module* model = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  std::int64_t optimizer_steps = 0;  // updates applied so far
  bool optimizer_step_due = true;    // an update follows every backward in this loop
  bool optimizer_stepped = false;    // this step's update was applied
  bool skip_optimizer_step = false;  // a hook may veto the update
  std::vector<torch::Tensor> parameters() const { return model->parameters(); }
};

// The runner: which points the loop fires (a list of tag types) and what it passes to them.
// Attaching a hook checks, at compile time, that it binds to one of these points.
template <class... Hooks>
class MyLoop {
 public:
  using hook_points = hookforge::point_list<pts::on_post_backward, pts::on_post_step>;
  using Ctx = StepContext;
  explicit MyLoop(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<MyLoop, Hooks...> hooks_;
};
template <class... H>
MyLoop(H...) -> MyLoop<H...>;

// A hook of your own: a plain class whose `bindings` say which method runs at which point.
struct PrintLoss {
  std::int64_t every = 16;  // steps
  void print(StepContext& ctx) {
    if (ctx.step % every == 0)
      fmt::print("epoch {} step {:4} loss {:.5f}\n", ctx.epoch, ctx.step, ctx.loss.item<double>());
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(print, pts::on_post_step));
};

int main() {
  torch::manual_seed(0);
  // The data: y = 3x - 1 plus noise, in batches of 32.
  auto x = torch::randn({512, 1});
  auto y = 3 * x - 1 + 0.1 * torch::randn({512, 1});
  torch::nn::Linear model(1, 1);
  torch::optim::SGD sgd(model->parameters(), /*lr=*/0.1);

  // GradientClip is built in: it clips the gradients' 2-norm to 1 at on_post_backward.
  MyLoop loop{hookforge::GradientClip{1.0}, PrintLoss{}};
  StepContext ctx;
  ctx.model = model.get();
  ctx.optimizer = &sgd;

  for (ctx.epoch = 0; ctx.epoch < 5; ++ctx.epoch) {
    for (std::int64_t i = 0; i < 512; i += 32, ++ctx.step) {
      sgd.zero_grad();
      ctx.skip_optimizer_step = false;
      ctx.loss = torch::mse_loss(model(x.slice(0, i, i + 32)), y.slice(0, i, i + 32));
      ctx.loss.backward();
      loop.hooks().fire<pts::on_post_backward>(ctx);  // GradientClip runs here
      ctx.optimizer_stepped = !ctx.skip_optimizer_step;
      if (ctx.optimizer_stepped) {
        sgd.step();
        ++ctx.optimizer_steps;
      }
      loop.hooks().fire<pts::on_post_step>(ctx);  // PrintLoss runs here
    }
  }
  fmt::print("learned y = {:.3f} x + {:.3f} (true: 3x - 1)\n", model->weight.item<double>(),
             model->bias.item<double>());
  return ctx.loss.item<double>() < 0.05 ? 0 : 1;
}
