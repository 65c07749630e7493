// A stateful hook whose state_dict() returns a double: a checkpoint takes a hookforge::state_map.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

namespace pts = hookforge::points;

struct StepAverage {
  double value = 0;
  void update(hookforge::TrainingContext&) { value += 1; }
#ifdef HOOKFORGE_SHOULD_FAIL
  double state_dict() const { return value; }
  void load_state_dict(double v) { value = v; }
#else
  hookforge::state_map state_dict() const { return {{"value", value}}; }
  void load_state_dict(const hookforge::state_map& s) {
    value = hookforge::state_value<double>(s, "StepAverage", "value");
  }
#endif
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(update, pts::on_post_step));
};

int main() {
  torch::nn::Linear model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  hookforge::TrainingEpochRunner runner(sgd, {}, StepAverage{});
  hookforge::checkpoint_writer out;
  hookforge::save_component(out, "training_runner", runner);
}
