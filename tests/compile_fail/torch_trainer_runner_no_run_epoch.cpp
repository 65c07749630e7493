// A runner of the user's, given to the Trainer without a run_epoch: one hookforge message
// naming the runner and the member it lacks, with this file's line (the Trainer's) in the report.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

struct Ctx : hookforge::epoch_counters {
  hookforge::score_accumulator running_scores;
  hookforge::epoch_scores scores;
  bool stop_training = false;
};

template <class... Hooks>
class MyRunner : public hookforge::training_runner_base<MyRunner<Hooks...>, Hooks...> {
 public:
  using hook_points = hookforge::point_list<hookforge::points::on_epoch_start, hookforge::points::on_epoch_end>;
  using Ctx = ::Ctx;
  explicit MyRunner(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : hookforge::training_runner_base<MyRunner, Hooks...>(optimizer, std::move(hooks)...) {}
#ifndef HOOKFORGE_SHOULD_FAIL
  template <class Model, class Loader, class Criterion>
  hookforge::epoch_result run_epoch(Model&, Loader&&, std::int64_t, Criterion&&) { return {}; }
#endif
};

int main() {
  auto model = [](const hookforge::Entry& e) { return e.at("input"); };
  auto weight = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD sgd({weight}, 0.1);
  MyRunner<> runner(sgd);
  hookforge::Trainer trainer(model, runner, hookforge::no_validation{}, {});
}
