// Tests of trainer_options::val_interval_steps (runners/trainer_validation.hpp): validation
// every N optimiser updates, between two batches where the update falls inside an epoch (hooks
// at on_trainer_validation_finished, the training going on exactly as without it) and as the
// epoch's own validation where it falls on the epoch's last batch; EarlyStopping and
// CheckpointSaver's best follow those validations, a stop there ends the epoch after that
// batch, and a best checkpoint taken there resumes to the uninterrupted run's weights.
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "file_testing.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/hooks/early_stopping.hpp"
#include "hookforge/hooks/progress_bar.hpp"

#include <catch2/catch.hpp>

using namespace tfx;
using namespace hookforge;
using Catch::Contains;

namespace {

/// What the trainer's hooks saw: each validation between batches (the steps done then), and
/// the model's mode at each step after one.
struct Watch {
  torch::nn::Module* model = nullptr;
  std::vector<std::int64_t> validated_at;  ///< global_step of each validation between batches
  std::vector<bool> training_mode;         ///< at every on_trainer_step_finished
  void validated(TrainerContext& ctx) {
    CHECK(ctx.validated);
    CHECK_FALSE(ctx.val_scores.empty());
    validated_at.push_back(ctx.global_step);
  }
  void step(TrainerContext&) { training_mode.push_back(model->is_training()); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(validated, pts::on_trainer_validation_finished),
                          HOOKFORGE_HOOKS_INTO(step, pts::on_trainer_step_finished));
};

/// 6 batches an epoch, 2 per update (3 updates an epoch), validating every `every` updates
/// and (val_interval) never at epochs' ends but by them.
template <class... Extra>
struct Validated {
  Regressor model;
  torch::optim::SGD sgd;
  TrainingEpochRunner<> train;
  ValidationEpochRunner<> val;
  Trainer<Regressor, TrainingEpochRunner<>, ValidationEpochRunner<>, Watch, Extra...> trainer;

  explicit Validated(std::int64_t every, std::int64_t epochs, std::filesystem::path dir,
                     Extra... extra)
      : model((torch::manual_seed(3), Regressor())),
        sgd(model->parameters(), 0.1),
        train(sgd, training_options{.gradient_accumulation_steps = 2}),
        trainer(model, train, val,
                {.epochs = epochs,
                 .val_interval = 0,
                 .val_interval_steps = every,
                 .monitor = "loss",
                 .work_dir = std::move(dir)},
                Watch{.model = model.ptr().get(), .validated_at = {}, .training_mode = {}},
                std::move(extra)...) {}
  auto& watch() { return trainer.hooks().template get<0>(); }
};

std::vector<torch::Tensor> weights(Regressor& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

/// 24 samples in 6 shuffled batches of 4: a loader whose position a checkpoint between batches
/// holds (a std::vector has none).
DataLoader<tensor_dataset> shuffled_loader() {
  torch::manual_seed(5);
  auto x = torch::randn({24, 2});
  auto y = (x.select(1, 0) * 3.0 - x.select(1, 1) * 2.0 + 0.5).unsqueeze(1);
  return DataLoader<tensor_dataset>(tensor_dataset{{"input", x}, {"target", y}},
                                    {.batch_size = 4, .shuffle = true, .seed = 3});
}

bool same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("val_interval_steps validates between batches and at the epoch's end it falls on",
          "[trainer][val_interval_steps]") {
  const auto data = regression_data(6, 4);
  Validated<> run(/*every=*/2, /*epochs=*/2, ".");
  const auto result = run.trainer.fit(data, data, mse);

  // Updates 2 and 4 fall inside epochs (batches 4 of the first, 2 of the second); update 6
  // is the second epoch's last, validated as that epoch's own.
  CHECK(run.watch().validated_at == std::vector<std::int64_t>{4, 8});
  REQUIRE(result.history.size() == 2);
  CHECK_FALSE(result.history[0].validated);
  CHECK(result.history[1].validated);
  CHECK(result.stop_reason == "epochs");
  // Back in training mode after each validation between batches.
  CHECK(run.watch().training_mode == std::vector<bool>(10, true));

  // Validating changes nothing in the training: the same weights and epoch scores as a run
  // that never validates.
  Validated<> plain(/*every=*/0, /*epochs=*/2, ".");
  const auto unvalidated = plain.trainer.fit(data, data, mse);
  CHECK(same_weights(weights(run.model), weights(plain.model)));
  CHECK(result.history[0].train_scores == unvalidated.history[0].train_scores);
  CHECK(result.history[1].train_scores == unvalidated.history[1].train_scores);
  CHECK(plain.watch().validated_at.empty());
}

TEST_CASE("a stop asked at a validation between batches ends that epoch after the batch",
          "[trainer][val_interval_steps]") {
  const auto data = regression_data(6, 4);
  // Any loss below the threshold stops at once: at the first validation, update 2.
  Validated<EarlyStopping> run(/*every=*/2, /*epochs=*/3, ".",
                               EarlyStopping({.monitor = "loss", .stopping_threshold = 1e9}));
  const auto result = run.trainer.fit(data, data, mse);
  CHECK(run.watch().validated_at == std::vector<std::int64_t>{4});
  CHECK_THAT(result.stop_reason, Contains("loss"));
  CHECK(result.completed_epochs == 1);  // the shortened epoch counts as done
  CHECK(run.train.global_step() == 4);
  REQUIRE(result.history.size() == 1);
  CHECK_FALSE(result.history[0].validated);  // not again, on the same weights
}

TEST_CASE("CheckpointSaver's best follows validations between batches and resumes there exactly",
          "[trainer][val_interval_steps][resume]") {
  tfx::temp_dir scratch;
  const auto data = regression_data(6, 4);
  auto loader = shuffled_loader();
  Validated<CheckpointSaver> first(
      /*every=*/2, /*epochs=*/2, scratch.path / "a",
      CheckpointSaver({.interval = 100, .save_best = "loss", .save_top_k = 3}));
  first.trainer.fit(loader, data, mse);
  // Three validations, three best files: two between batches (by steps done), the last as
  // the second epoch's own.
  const auto& saver = first.trainer.hooks().template get<1>();
  CHECK(saver.best_files() == std::vector<std::string>{"best_loss_iter_4.pt", "best_loss_iter_8.pt",
                                                       "best_loss_epoch_2.pt"});
  const auto between = scratch.path / "a" / "best_loss_iter_4.pt";
  REQUIRE(std::filesystem::exists(between));

  // From the best taken between batches 4 and 5 of the first epoch: the rest of the run
  // gives the uninterrupted run's weights, without validating update 2 again.
  Validated<CheckpointSaver> resumed(
      /*every=*/2, /*epochs=*/2, scratch.path / "b",
      CheckpointSaver({.interval = 100, .save_best = "loss", .save_top_k = 3}));
  resumed.trainer.load_checkpoint(between);
  auto again = shuffled_loader();
  resumed.trainer.fit(again, data, mse);
  CHECK(same_weights(weights(resumed.model), weights(first.model)));
  CHECK(resumed.watch().validated_at == std::vector<std::int64_t>{8});
}

TEST_CASE("a ProgressBar shared by both runners counts the training epoch across validations",
          "[trainer][val_interval_steps][progress_bar]") {
  std::ostringstream out;
  ProgressBar bar{{.refresh = 100, .stream = &out}};
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd, {}, hookforge::ref(bar));
  ValidationEpochRunner val({}, hookforge::ref(bar));
  Trainer trainer(model, train, val, {.epochs = 1, .val_interval = 0, .val_interval_steps = 2});
  trainer.fit(regression_data(6, 4), regression_data(2, 4), mse);
  // Two validations between batches (after updates 2 and 4), each its own bar; the training
  // epoch's counts all 6 of its batches.
  CHECK_THAT(out.str(), Contains("train epoch 1/1 done: 6 batches"));
  CHECK_THAT(out.str(), Contains("val epoch 1/1 done: 2 batches"));
}

TEST_CASE("val_interval_steps out of range, or without a validation runner, is refused",
          "[trainer][val_interval_steps][errors]") {
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd);
  ValidationEpochRunner val;
  CHECK_THROWS_WITH(Trainer(model, train, val, {.val_interval_steps = -1}),
                    Contains("val_interval_steps must be >= 0"));
  no_validation none;
  CHECK_THROWS_WITH(Trainer(model, train, none, {.val_interval_steps = 5}),
                    Contains("val_interval_steps validates between batches, and this trainer "
                             "has no validation runner"));
}
