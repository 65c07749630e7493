// A tiny program that uses hookforge's LibTorch layer as a dependency would.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

std::int64_t fit_and_checkpoint(const std::filesystem::path& file);  // consumer_torch_trainer.cpp

int main(int, char** argv) {
  torch::optim::SGD optimizer({torch::zeros({1}, torch::requires_grad())}, 0.1);
  hookforge::StepLR scheduler(optimizer, /*step_size=*/1, /*gamma=*/0.5);
  scheduler.step();
  const hookforge::Entry batch{{"input", torch::ones({4, 2})}};
  std::printf("torch consumer: batch %zu, lr %.3f\n", batch.batch_size(), scheduler.last_lr()[0]);
  const std::filesystem::path file = std::string(argv[0]) + ".ckpt";  // one per consumer
  std::printf("torch consumer: resumed after %lld epochs\n",
              static_cast<long long>(fit_and_checkpoint(file)));
  std::filesystem::remove(file);
  return 0;
}
