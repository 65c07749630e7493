// CudaGraphTrainingRunner: its refusals (on any machine) and, on a GPU, that a step replayed
// from its CUDA graph trains as TrainingEpochRunner's eager step does. The [cuda] cases are
// skipped where LibTorch has no CUDA device (skip.hpp); scripts/gpu_check.sh runs them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "hookforge/torch/runners/cuda_graph_runner.hpp"
#include "skip.hpp"

using namespace hookforge;
using namespace tfx;

namespace {

const torch::Device cuda0(torch::kCUDA, 0);

/// What constructing the runner throws ("" when it does not).
template <class F>
std::string refusal(F&& make) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// 2 -> 32 -> 32 -> 1 without dropout, so that eager and replayed steps see the same numbers.
struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc1(register_module("fc1", torch::nn::Linear(2, 32))),
        fc2(register_module("fc2", torch::nn::Linear(32, 32))),
        fc3(register_module("fc3", torch::nn::Linear(32, 1))) {}
  torch::Tensor forward(const Entry& e) {
    return fc3(torch::relu(fc2(torch::relu(fc1(e.at("input"))))));
  }
  torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(Net);

/// 10 batches of 16 and a last one of 8 (another shape: it trains eagerly), on the GPU.
std::vector<Entry> gpu_data() {
  auto data = regression_data(10, 16, 0.01, 3);
  data.push_back(regression_data(1, 8, 0.01, 4).front());
  for (auto& e : data) e = e.to(cuda0);
  return data;
}

/// Counts its calls at on_post_step (after the replay: host code runs every step).
struct StepCount {
  std::int64_t* steps;
  void count(TrainingContext&) { ++*steps; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, points::on_post_step));
};

/// Claims capture safety and reads the loss on the host: the recording must say so.
struct LyingReader {
  static constexpr bool capture_safe = true;
  void read(TrainingContext& ctx) { (void)ctx.loss.item<float>(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(read, points::on_post_backward));
};

/// Two nets on the GPU with the same parameters (from `seed`).
std::pair<Net, Net> twin_nets(std::uint64_t seed) {
  torch::manual_seed(seed);
  Net a, b;
  a->to(cuda0);
  b->to(cuda0);
  torch::NoGradGuard no_grad;
  auto from = a->parameters(), to = b->parameters();
  for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  return {a, b};
}

/// Largest absolute difference between two models' parameters.
double max_difference(torch::nn::Module& a, torch::nn::Module& b) {
  double worst = 0;
  auto pa = a.parameters(), pb = b.parameters();
  for (std::size_t i = 0; i < pa.size(); ++i)
    worst = std::max(worst, (pa[i] - pb[i]).abs().max().item<double>());
  return worst;
}

}  // namespace

TEST_CASE("CudaGraphTrainingRunner refuses, when constructed, what a recorded step cannot do") {
  Net net;
  torch::optim::SGD sgd(net->parameters(), 0.1);
  if (!HOOKFORGE_HAS_CUDA) {
    CHECK(refusal([&] {
            CudaGraphTrainingRunner(sgd, {.device = cuda0}, {});
          }).find("this LibTorch was built without CUDA") != std::string::npos);
    return;
  }
  CHECK(refusal([&] { CudaGraphTrainingRunner(sgd, {}, {}); }) ==
        "CudaGraphTrainingRunner: the device is cpu, and a CUDA graph records the step on a CUDA "
        "device; set training_options::device to cuda, or train with TrainingEpochRunner");
  CHECK(refusal([&] {
          CudaGraphTrainingRunner(sgd, {.gradient_accumulation_steps = 2, .device = cuda0}, {});
        }).find("gradient_accumulation_steps is 2") != std::string::npos);
  torch::optim::Adam adam(net->parameters());
  CHECK(refusal([&] {
          CudaGraphTrainingRunner(adam, {.device = cuda0}, {});
        }).find("use hookforge::FusedAdam, FusedAdamW or torch::optim::SGD") != std::string::npos);
  CHECK(refusal([&] {
          CudaGraphTrainingRunner(sgd, {.mixed_precision = true, .device = cuda0}, {});
        }).find("the GradScaler reads its inf check on the host") != std::string::npos);
  CHECK(refusal([&] {
          CudaGraphTrainingRunner(sgd, {.device = cuda0}, {.warmup_steps = -1});
        }).find("warmup_steps must be >= 0, got -1") != std::string::npos);
  FusedAdam fused(net->parameters());
  CHECK(refusal([&] { CudaGraphTrainingRunner(fused, {.device = cuda0}, {}); }).empty());
  CHECK(refusal([&] { CudaGraphTrainingRunner(sgd, {.device = cuda0}, {}); }).empty());
}

TEST_CASE("CUDA: a step replayed from a CUDA graph trains as the eager step, to 1e-5",
          "[cuda][cuda_graph]") {
  HOOKFORGE_REQUIRE_CUDA();
  auto data = gpu_data();
  auto criterion = mse;
  auto [eager_net, graphed_net] = twin_nets(5);
  const auto sgd_options = torch::optim::SGDOptions(0.05).momentum(0.9);
  torch::optim::SGD eager_sgd(eager_net->parameters(), sgd_options);
  torch::optim::SGD graphed_sgd(graphed_net->parameters(), sgd_options);
  std::int64_t steps = 0;
  TrainingEpochRunner eager(eager_sgd, {.device = cuda0}, GradientClip({.max_norm = 1}));
  CudaGraphTrainingRunner graphed(graphed_sgd, {.device = cuda0}, {}, GradientClip({.max_norm = 1}),
                                  StepCount{&steps});
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    const auto e = eager.run_epoch(eager_net, data, epoch, criterion);
    const auto g = graphed.run_epoch(graphed_net, data, epoch, criterion);
    CHECK(g.scores.at("loss") == Approx(e.scores.at("loss")).epsilon(1e-5));
  }
  CHECK(max_difference(*eager_net, *graphed_net) <= 1e-5);
  CHECK(graphed.recordings() == 1);
  CHECK(graphed.eager_steps() == 3);                  // each epoch's last batch (8 samples)
  CHECK(graphed.replayed_steps() == 3 * 10 - 3 - 1);  // after 3 warm-up steps and the recording
  CHECK(steps == 33);                                 // on_post_step ran for every batch
  CHECK(graphed.optimizer_steps() == eager.optimizer_steps());
}

TEST_CASE("CUDA: FusedAdam under a per-epoch StepLR: the step is recorded again when lr changes",
          "[cuda][cuda_graph]") {
  HOOKFORGE_REQUIRE_CUDA();
  auto data = gpu_data();
  auto criterion = mse;
  auto [eager_net, graphed_net] = twin_nets(6);
  FusedAdam eager_adam(eager_net->parameters(), torch::optim::AdamOptions(1e-2));
  FusedAdam graphed_adam(graphed_net->parameters(), torch::optim::AdamOptions(1e-2));
  StepLR eager_lr(eager_adam, 1, 0.5), graphed_lr(graphed_adam, 1, 0.5);
  TrainingEpochRunner eager(eager_adam, {.device = cuda0});
  CudaGraphTrainingRunner graphed(graphed_adam, {.device = cuda0}, {.warmup_steps = 2});
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    eager.run_epoch(eager_net, data, epoch, criterion);
    graphed.run_epoch(graphed_net, data, epoch, criterion);
    eager_lr.step();
    graphed_lr.step();
  }
  CHECK(max_difference(*eager_net, *graphed_net) <= 1e-5);
  CHECK(graphed.recordings() == 3);  // epoch 0 after the warm-up, then once per new lr
}

TEST_CASE("CUDA: float16 autocast with loss scaling and FusedAdam, replayed",
          "[cuda][cuda_graph]") {
  HOOKFORGE_REQUIRE_CUDA();
  auto data = gpu_data();
  auto criterion = mse;
  torch::manual_seed(7);
  Net net;
  net->to(cuda0);
  FusedAdam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  CudaGraphTrainingRunner graphed(adam, {.mixed_precision = true, .device = cuda0}, {});
  REQUIRE(graphed.scaler().is_enabled());
  const double first = graphed.run_epoch(net, data, 0, criterion).scores.at("loss");
  double last = first;
  for (std::int64_t epoch = 1; epoch < 10; ++epoch)
    last = graphed.run_epoch(net, data, epoch, criterion).scores.at("loss");
  CHECK(graphed.replayed_steps() > 0);
  CHECK(last < first / 10);
}

TEST_CASE("CUDA: a host read inside the recorded step fails the recording, naming the way out",
          "[cuda][cuda_graph]") {
  HOOKFORGE_REQUIRE_CUDA();
  auto data = gpu_data();
  auto criterion = mse;
  Net net;
  net->to(cuda0);
  torch::optim::SGD sgd(net->parameters(), 0.05);
  CudaGraphTrainingRunner graphed(sgd, {.device = cuda0}, {.warmup_steps = 1}, LyingReader{});
  CHECK_THROWS_WITH(
      graphed.run_epoch(net, data, 0, criterion),
      Catch::Contains("CudaGraphTrainingRunner: the training step could not be recorded in a "
                      "CUDA graph") &&
          Catch::Contains("SyncAudit names which"));
}

TEST_CASE("CUDA: the Trainer drives CudaGraphTrainingRunner as any training runner",
          "[cuda][cuda_graph]") {
  HOOKFORGE_REQUIRE_CUDA();
  auto train_data = gpu_data();
  auto val_data = gpu_data();
  torch::manual_seed(8);
  Net net;
  net->to(cuda0);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  CudaGraphTrainingRunner train(sgd, {.device = cuda0}, {});
  ValidationEpochRunner val(inference_options{.device = cuda0});
  Trainer trainer(net, train, val, trainer_options{.epochs = 15});
  auto criterion = mse;
  const auto result = trainer.fit(train_data, val_data, criterion);
  CHECK(result.completed_epochs == 15);
  CHECK(result.val_scores.at("loss") < 1e-2);
  CHECK(train.replayed_steps() == 15 * 10 - 3 - 1);
}
