// One training step written with LibTorch alone: the baseline of the pair measured by
// `benchmarks/compile_time.sh --torch`; torch_hookforge.cpp does the same through
// hookforge's Trainer, two runners and five hooks.
#include <torch/torch.h>

#include <cstdio>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : body(register_module("body",
                             torch::nn::Sequential(torch::nn::Linear(1, 64), torch::nn::Tanh(),
                                                   torch::nn::Linear(64, 1)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return body->forward(x); }
  torch::nn::Sequential body;
};
TORCH_MODULE(Net);

int main() {
  torch::manual_seed(0);
  auto x = torch::rand({32, 1});
  auto y = torch::sin(3 * x);
  Net net;
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(0.01));

  adam.zero_grad();
  auto loss = torch::mse_loss(net->forward(x), y);
  loss.backward();
  torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
  adam.step();
  std::printf("loss %.4f\n", loss.item<double>());
}
