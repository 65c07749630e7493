// A runner of the user's, written without the runner kit, given to the Trainer without
// set_total_epochs: one hookforge message naming the runner and the member it lacks, with
// this file's line (the Trainer's) in the report.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

struct PlainCtx {
  int step = 0;
};

template <class... Hooks>
class PlainRunner {
 public:
  using hook_points = hookforge::point_list<hookforge::points::on_epoch_start, hookforge::points::on_epoch_end>;
  using Ctx = PlainCtx;
  explicit PlainRunner(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : optimizer_(&optimizer), hooks_(std::move(hooks)...) {}
  template <class Model, class Loader, class Criterion>
  hookforge::epoch_result run_epoch(Model&, Loader&&, std::int64_t, Criterion&&) { return {}; }
#ifndef HOOKFORGE_SHOULD_FAIL
  void set_total_epochs(std::int64_t) {}
#endif
  std::int64_t global_step() const { return 0; }
  auto& hooks() { return hooks_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }

 private:
  torch::optim::Optimizer* optimizer_;
  hookforge::hook_pack<PlainRunner, Hooks...> hooks_;
};

int main() {
  auto model = [](const hookforge::Entry& e) { return e.at("input"); };
  auto weight = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD sgd({weight}, 0.1);
  PlainRunner<> runner(sgd);
  hookforge::Trainer trainer(model, runner, hookforge::no_validation{}, {});
}
