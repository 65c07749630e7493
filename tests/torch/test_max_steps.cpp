// Tests of trainer_options::max_steps (runners/trainer.hpp): the run stops after that many
// optimiser updates; reached within an epoch, the epoch ends after the batch that spent them,
// with its validation, scheduler step and hooks as at any epoch's end; a run resumed with its
// budget spent runs nothing, and one given a larger budget goes on.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "file_testing.hpp"

#include <catch2/catch.hpp>

using namespace tfx;
using namespace hookforge;
using Catch::Contains;

namespace {

/// What the trainer's hooks saw: steps between batches, and each epoch's end.
struct Watch {
  std::int64_t steps = 0;
  std::vector<std::string> stops;  ///< the stop reason at each epoch's end ("" none)
  std::int64_t total_epochs = 0;   ///< as the trainer's hooks see them
  void step(TrainerContext&) { ++steps; }
  void epoch(TrainerContext& ctx) {
    stops.push_back(ctx.stop_training ? ctx.stop_reason : "");
    total_epochs = ctx.total_epochs;
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_trainer_step_finished),
                          HOOKFORGE_HOOKS_INTO(epoch, pts::on_trainer_epoch_finished));
};

/// A run of 6 batches an epoch, 2 per update (3 updates an epoch), validating every epoch.
struct Budgeted {
  Regressor model;
  torch::optim::SGD sgd;
  StepLR scheduler;
  TrainingEpochRunner<> train;
  ValidationEpochRunner<> val;
  Trainer<Regressor, TrainingEpochRunner<>, ValidationEpochRunner<>, Watch> trainer;

  explicit Budgeted(std::int64_t max_steps, std::int64_t epochs = 5)
      : model((torch::manual_seed(3), Regressor())),
        sgd(model->parameters(), 0.1),
        scheduler(sgd, 1, 0.5),
        train(sgd, training_options{.gradient_accumulation_steps = 2}),
        trainer(model, train, val,
                {.epochs = epochs, .max_steps = max_steps, .scheduler = &scheduler}, Watch{}) {
    scheduler.set_interval(schedule_interval::step);
  }
  const Watch& watch() { return trainer.hooks().get<0>(); }
};

}  // namespace

TEST_CASE("max_steps within an epoch ends it after the update that spends them",
          "[trainer][max_steps]") {
  const auto data = regression_data(6, 4);
  Budgeted run(/*max_steps=*/4);
  const auto result = run.trainer.fit(data, data, mse);

  CHECK(result.stop_reason == "max_steps");
  CHECK(result.completed_epochs == 2);  // the second ended after its 2nd batch
  CHECK(run.train.optimizer_steps() == 4);
  CHECK(run.train.global_step() == 6 + 2);
  CHECK(run.scheduler.last_epoch() == 4);  // stepped per update, the last one included
  CHECK(run.train.total_epochs() == 2);    // what a progress bar shows: 2 of the 5 epochs
  CHECK(run.watch().total_epochs == 2);    // and the trainer's hooks (LossLogger's "epoch 2/2")
  REQUIRE(result.history.size() == 2);
  CHECK(result.history[1].validated);  // the shortened epoch validates as any other
  // Between batches: 5 in the first epoch, 1 in the second (its 2nd batch is its end).
  CHECK(run.watch().steps == 5 + 1);
  CHECK(run.watch().stops == std::vector<std::string>{"", "max_steps"});
}

TEST_CASE("max_steps at an epoch's end starts no further epoch, 0 runs none",
          "[trainer][max_steps]") {
  const auto data = regression_data(6, 4);
  Budgeted at_end(/*max_steps=*/3);
  const auto result = at_end.trainer.fit(data, data, mse);
  CHECK(result.stop_reason == "max_steps");
  CHECK(result.completed_epochs == 1);
  CHECK(at_end.watch().stops == std::vector<std::string>{"max_steps"});

  Budgeted none(/*max_steps=*/0);
  const auto nothing = none.trainer.fit(data, data, mse);
  CHECK(nothing.stop_reason == "max_steps");
  CHECK(nothing.history.empty());
  CHECK(none.train.global_step() == 0);

  Budgeted epochs_first(/*max_steps=*/100, /*epochs=*/2);
  CHECK(epochs_first.trainer.fit(data, data, mse).stop_reason == "epochs");
}

TEST_CASE("a run resumed with its budget spent trains no further, a larger budget goes on",
          "[trainer][max_steps][resume]") {
  tfx::temp_dir scratch;
  const auto path = scratch.path / "budget.ckpt";
  const auto data = regression_data(6, 4);
  Budgeted first(/*max_steps=*/4);
  first.trainer.fit(data, data, mse);
  first.trainer.save_checkpoint(path);

  Budgeted spent(/*max_steps=*/4);
  spent.trainer.load_checkpoint(path);
  const auto again = spent.trainer.fit(data, data, mse);
  CHECK(again.stop_reason == "max_steps");
  CHECK(again.history.empty());
  CHECK(spent.train.optimizer_steps() == 4);

  Budgeted more(/*max_steps=*/7);
  more.trainer.load_checkpoint(path);
  const auto rest = more.trainer.fit(data, data, mse);
  CHECK(rest.stop_reason == "max_steps");
  CHECK(more.train.optimizer_steps() == 7);
  CHECK(rest.completed_epochs == 3);  // the shortened epoch counted as done
  CHECK(more.scheduler.last_epoch() == 7);
}

TEST_CASE("max_steps out of range, and a scheduler shorter than the budget, are refused",
          "[trainer][max_steps][errors]") {
  const auto data = regression_data(6, 4);
  CHECK_THROWS_WITH(Budgeted(-2), Contains("max_steps must be -1 (no limit) or >= 0, got -2"));

  // OneCycleLR is stepped per update: the budget, not epochs x updates, is its length.
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  TrainingEpochRunner train(sgd, training_options{.gradient_accumulation_steps = 2});
  no_validation none;
  OneCycleLR fits(sgd, {.max_lr = 0.5, .total_steps = 4});
  Trainer ok(model, train, none, {.epochs = 5, .max_steps = 4, .scheduler = &fits});
  CHECK_NOTHROW(ok.check_scheduler_length(data));
  OneCycleLR short_cycle(sgd, {.max_lr = 0.5, .total_steps = 3});
  Trainer refused(model, train, none, {.epochs = 5, .max_steps = 4, .scheduler = &short_cycle});
  CHECK_THROWS_WITH(refused.fit(data, mse),
                    Contains("the scheduler ends after 3 steps, but the run steps it 4 times "
                             "(max_steps 4): give it total_steps 4"));
}
