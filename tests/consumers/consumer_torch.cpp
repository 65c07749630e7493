// A tiny program that uses hookforge's LibTorch layer as a dependency would.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdio>

int main() {
  torch::optim::SGD optimizer({torch::zeros({1}, torch::requires_grad())}, 0.1);
  hookforge::StepLR scheduler(optimizer, /*step_size=*/1, /*gamma=*/0.5);
  scheduler.step();
  const hookforge::Entry batch{{"input", torch::ones({4, 2})}};
  std::printf("torch consumer: batch %zu, lr %.3f\n", batch.batch_size(), scheduler.last_lr()[0]);
  return 0;
}
