// The CUDA path of the runners and the trainer. Every case is tagged [cuda] (CTest label
// `cuda`) and is skipped where LibTorch has no CUDA device (skip.hpp); on a GPU machine
// they check that training, mixed precision with loss scaling, checkpoints and exact
// resume work on the device.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fixtures.hpp"
#include "file_testing.hpp"
#include "skip.hpp"

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
