// A plain LibTorch module, whose forward takes a Tensor, given to a runner that feeds it
// the batch as an Entry: one hookforge message, with this file's line in the report.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

struct EntryNet : torch::nn::Module {
  torch::nn::Linear linear{2, 1};
  torch::Tensor forward(const hookforge::Entry& e) { return linear(e.at("input")); }
};

int main() {
#ifdef HOOKFORGE_SHOULD_FAIL
  torch::nn::Linear model(2, 1);
#else
  EntryNet model;
#endif
  hookforge::InferenceRunner runner(hookforge::inference_options{});
  std::vector<hookforge::Entry> data;
  runner.run_epoch(model, data, 0);
}
