// The CUDA path of the runners and the trainer. Every case is tagged [cuda] (CTest label
// `cuda`) and is skipped where LibTorch has no CUDA device (skip.hpp); on a GPU machine
// they check that training, mixed precision with loss scaling, checkpoints and exact
// resume work on the device, and that a hooked mixed-precision step never synchronises.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "file_testing.hpp"
#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "skip.hpp"

#if HOOKFORGE_HAS_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

using namespace hookforge;
using namespace tfx;

namespace {

const torch::Device cuda0(torch::kCUDA, 0);

/// The regression data on the GPU (the runner passes batches already there through).
std::vector<Entry> on_gpu(std::vector<Entry> data) {
  for (auto& e : data) e = e.to(cuda0);
  return data;
}

/// Records the dtype of the model's output, to see autocast at work.
struct OutputDtype {
  std::vector<c10::ScalarType>* seen;
  void check(TrainingContext& ctx) { seen->push_back(ctx.entry.at("output").scalar_type()); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(check, points::on_post_forward));
};

#if HOOKFORGE_HAS_CUDA
/// c10's sync-debug mode: L_ERROR makes every host synchronisation throw.
void set_sync_debug(c10::cuda::SyncDebugMode mode) {
  c10::cuda::warning_state().set_sync_debug_mode(mode);
}

/// Sets the sync-debug mode to error at on_pre_step of batches [from, to), before every
/// other hook (HIGHEST), and back at on_post_step after all of them (LOWEST): any hook
/// or runner step in between that waits for the GPU throws.
struct NoSyncFrom {
  static constexpr int priority = hookforge::priority::HIGHEST;
  std::int64_t from, to;
  void on(TrainingContext& ctx) {
    if (ctx.batch_idx >= from && ctx.batch_idx < to)
      set_sync_debug(c10::cuda::SyncDebugMode::L_ERROR);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(on, points::on_pre_step));
};
struct NoSyncUntil {
  static constexpr int priority = hookforge::priority::LOWEST;
  std::int64_t* guarded;
  void off(TrainingContext&) {
    if (c10::cuda::warning_state().get_sync_debug_mode() == c10::cuda::SyncDebugMode::L_ERROR)
      ++*guarded;
    set_sync_debug(c10::cuda::SyncDebugMode::L_DISABLED);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(off, points::on_post_step));
};
#endif

}  // namespace

TEST_CASE("CUDA: the trainer learns a linear regression on the GPU", "[cuda]") {
  HOOKFORGE_REQUIRE_CUDA();
  torch::manual_seed(0);
  Regressor model;
  model->to(cuda0);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto train_data = regression_data(8, 16, 0.01, 1);
  auto val_data = on_gpu(regression_data(2, 16, 0.01, 2));
  TrainingEpochRunner train(sgd, training_options{.device = cuda0});  // moves CPU batches
  ValidationEpochRunner val(inference_options{.device = cuda0});
  Trainer trainer(model, train, val, trainer_options{.epochs = 20});
  auto criterion = mse;
  auto result = trainer.fit(train_data, val_data, criterion);

  CHECK(result.completed_epochs == 20);
  CHECK(result.val_scores.at("loss") < 1e-3);
  auto w = model->linear->weight.detach().cpu();
  CHECK(w[0][0].item<double>() == Approx(3.0).margin(0.02));
  CHECK(w[0][1].item<double>() == Approx(-2.0).margin(0.02));
}

TEST_CASE("CUDA: float16 autocast with loss scaling still learns", "[cuda][amp]") {
  HOOKFORGE_REQUIRE_CUDA();
  std::vector<c10::ScalarType> seen;
  torch::manual_seed(2);
  Regressor m;
  m->to(cuda0);
  torch::optim::SGD opt(m->parameters(), 0.05);
  TrainingEpochRunner runner(opt, training_options{.mixed_precision = true, .device = cuda0},
                             OutputDtype{&seen});
  CHECK(runner.scaler().is_enabled());  // float16 on CUDA needs loss scaling
  auto data = on_gpu(regression_data(4, 16, 0.0, 6));
  auto criterion = mse;
  double first = runner.run_epoch(m, data, 0, criterion).scores.at("loss");
  double last = first;
  for (int epoch = 1; epoch < 15; ++epoch)
    last = runner.run_epoch(m, data, epoch, criterion).scores.at("loss");
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.front() == torch::kHalf);
  CHECK(m->linear->weight.scalar_type() == torch::kFloat);  // parameters stay float32
  CHECK(last < first / 10);
}

TEST_CASE("CUDA: 2 epochs + checkpoint + 2 epochs equal 4 epochs, bit for bit", "[cuda][resume]") {
  HOOKFORGE_REQUIRE_CUDA();
  tfx::temp_dir dir("hookforge_cuda_resume");
  const auto path = dir.path / "run.ckpt";
  auto data = on_gpu(regression_data(4, 16, 0.05, 3));
  auto val_data = on_gpu(regression_data(1, 16, 0.05, 4));

  auto run = [&](int epochs, bool save, bool load) {
    torch::manual_seed(7);
    Mlp model;
    model->to(cuda0);
    torch::optim::Adam adam(model->parameters(), 0.01);
    TrainingEpochRunner train(adam, training_options{.mixed_precision = true, .device = cuda0});
    ValidationEpochRunner val(inference_options{.device = cuda0});
    Trainer trainer(model, train, val, trainer_options{.epochs = epochs});
    if (load) trainer.load_checkpoint(path);
    auto criterion = mse;
    trainer.fit(data, val_data, criterion);
    if (save) trainer.save_checkpoint(path);
    return snapshot(*model);
  };
  const auto straight = run(4, false, false);
  run(2, true, false);
  const auto resumed = run(4, false, true);
  CHECK(same(straight, resumed));
}

TEST_CASE(
    "CUDA: a mixed-precision epoch with default_hooks, GradientClip and FusedAdam never "
    "synchronises",
    "[cuda][amp][sync]") {
  HOOKFORGE_REQUIRE_CUDA();
#if HOOKFORGE_HAS_CUDA
  torch::manual_seed(3);
  Regressor model;
  model->to(cuda0);
  FusedAdam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
  tfx::temp_dir dir("hookforge_cuda_sync_free");
  constexpr std::int64_t n = 24;
  std::ostringstream console, log;
  // The bar reads the loss at its refresh (here the last batch), the logger writes no step
  // rows: the documented reads fall outside batches [1, n - 1).
  default_hooks defaults({.progress = {.refresh = n, .stream = &console},
                          .logger = {.interval = 0, .out_dir = dir.path, .stream = &log}});
  std::int64_t guarded = 0;
  TrainingEpochRunner train(adam, training_options{.mixed_precision = true, .device = cuda0},
                            defaults.training(), GradientClip{1.0}, NoSyncFrom{1, n - 1},
                            NoSyncUntil{&guarded});
  REQUIRE(train.scaler().is_enabled());
  auto all = regression_data(1, 16 * n, 0.01, 4).front();
  DataLoader loader(tensor_dataset{{"input", all.at("input")}, {"target", all.at("target")}},
                    {.batch_size = 16, .pin_memory = true});
  const auto reads = host_reads();
  try {
    train.run_epoch(model, loader, 0, mse);
  } catch (...) {
    set_sync_debug(c10::cuda::SyncDebugMode::L_DISABLED);
    throw;  // a c10::Error naming the synchronising call
  }
  CHECK(guarded == n - 2);
  CHECK(host_reads() - reads == 1);  // the bar's read at the last batch
  const auto& t = defaults.timer.training();
  CHECK(t.device_steps > 0);  // IterTimer's CUDA events, read without waiting
  CHECK(t.mean_device_step > 0);
#endif
}

TEST_CASE("CUDA: pinned batches are copied to the device without blocking", "[cuda][data]") {
  HOOKFORGE_REQUIRE_CUDA();
  auto x = torch::randn({8, 2});
  DataLoader pinned(tensor_dataset{{"input", x}}, {.batch_size = 4, .pin_memory = true});
  DataLoader plain(tensor_dataset{{"input", x}}, {.batch_size = 4});
  CHECK((*pinned.begin()).at("input").is_pinned());
  CHECK_FALSE((*plain.begin()).at("input").is_pinned());
  auto on_gpu = on_device(Entry(*pinned.begin()), cuda0);
  CHECK(on_gpu.at("input").device() == cuda0);
  CHECK(torch::equal(on_gpu.at("input").cpu(), x.slice(0, 4, 8)));  // the loader's second batch
}

TEST_CASE("CUDA: FusedAdam on the GPU follows torch::optim::Adam", "[cuda][fused]") {
  HOOKFORGE_REQUIRE_CUDA();
  torch::manual_seed(5);
  auto X = torch::randn({64, 8}, cuda0), Y = torch::randn({64, 1}, cuda0);
  auto w0 = torch::randn({8, 1}, cuda0);
  auto w1 = w0.clone().requires_grad_(), w2 = w0.clone().requires_grad_();
  torch::optim::Adam adam({w1}, torch::optim::AdamOptions(1e-2).weight_decay(0.01));
  FusedAdam fused({w2}, torch::optim::AdamOptions(1e-2).weight_decay(0.01));
  for (int i = 0; i < 100; ++i)
    for (auto [w, opt] :
         {std::pair<torch::Tensor, torch::optim::Optimizer*>{w1, &adam}, {w2, &fused}}) {
      opt->zero_grad();
      (X.matmul(w) - Y).pow(2).mean().backward();
      opt->step();
    }
  CHECK((w1 - w2).abs().max().item<double>() < 1e-6);
}
