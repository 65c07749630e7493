// A hook that reads the loss on the host, attached where CudaGraphTrainingRunner records
// the step: refused at this file's line. Compiles on any LibTorch (the runner refuses a
// LibTorch without CUDA when constructed, not when compiled).
#include <hookforge/torch.hpp>
#include <hookforge/torch/runners/cuda_graph_runner.hpp>

namespace pts = hookforge::points;

struct LossPrinter {  // would print ctx.loss.item(): not capture-safe, as by default
  void print(hookforge::TrainingContext&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
#ifdef HOOKFORGE_SHOULD_FAIL
      print, pts::on_post_backward
#else
      print, pts::on_post_step  // after the replay: any hook may run there
#endif
      ));
};

int main() {
  torch::optim::SGD sgd(std::vector<torch::Tensor>{}, 0.1);
  hookforge::CudaGraphTrainingRunner runner(sgd, {.device = torch::kCUDA}, {}, LossPrinter{});
}
