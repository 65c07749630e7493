// A hook that reads a field of the trainer's context, attached to a training runner at a
// point the runner has: TrainingContext has no val_scores, so the handler cannot take it.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

namespace pts = hookforge::points;

struct ValLossPrinter {
#ifdef HOOKFORGE_SHOULD_FAIL
  void print(auto& ctx)
    requires requires { ctx.val_scores; }
  { (void)ctx.val_scores; }
#else
  void print(auto& ctx)
    requires requires { ctx.scores; }
  { (void)ctx.scores; }
#endif
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(print, pts::on_epoch_end));
};

int main() {
  torch::nn::Linear model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  hookforge::TrainingEpochRunner runner(sgd, {}, ValLossPrinter{});
}
