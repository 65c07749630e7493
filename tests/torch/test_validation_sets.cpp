// Tests of several named validation loaders (data/validation_sets.hpp): each validation runs
// the validation runner over every set in order, the scores of set s are "s/<score>" and each
// equals a validation over that set alone; the monitor, EarlyStopping and CheckpointSaver name
// one set's score; the runner's hooks see the set as ctx.dataset; names are checked.
#include <cstdint>
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

/// The set of each validation epoch, as the validation runner's hooks see it.
struct SeenSets {
  std::vector<std::string> sets;
  void seen(InferenceContext& ctx) { sets.emplace_back(ctx.dataset); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(seen, pts::on_epoch_end));
};

/// A regressor trained by SGD, and two validation sets, one noisy.
struct TwoSets {
  std::vector<Entry> easy = regression_data(2, 4, 0.0, 7), hard = regression_data(3, 4, 0.5, 8);
  Regressor model{(torch::manual_seed(3), Regressor())};
  torch::optim::SGD sgd{model->parameters(), 0.1};
  TrainingEpochRunner<> train{sgd};
  validation_sets<std::vector<Entry>> sets{named_loader{"easy", easy}, named_loader{"hard", hard}};
};

}  // namespace

TEST_CASE("each validation set's scores are named by it and equal a validation over it alone",
          "[trainer][validation_sets]") {
  TwoSets run;
  auto& [easy, hard, model, sgd, train, sets] = run;
  ValidationEpochRunner val({}, SeenSets{});
  Trainer trainer(model, train, val, {.epochs = 2, .monitor = "hard/loss"});
  const auto result = trainer.fit(regression_data(4, 4), sets, mse);

  REQUIRE(result.history.size() == 2);
  const auto& scores = result.history[1].val_scores;
  CHECK(scores.size() == 2);
  REQUIRE(scores.count("easy/loss") == 1);
  REQUIRE(scores.count("hard/loss") == 1);
  CHECK(scores.at("easy/loss") != scores.at("hard/loss"));
  // In the order given, each epoch.
  const auto& seen = val.hooks().get<0>().sets;
  CHECK(seen == std::vector<std::string>{"easy", "hard", "easy", "hard"});

  // The same weights validated over each set alone give the same scores; the runner's hooks
  // see no set's name once the trainer's validation is over.
  CHECK(val.run_epoch(model, easy, 1, mse).scores.at("loss") == scores.at("easy/loss"));
  CHECK(seen.back().empty());
  CHECK(val.run_epoch(model, hard, 1, mse).scores.at("loss") == scores.at("hard/loss"));
}

TEST_CASE("the monitor, EarlyStopping and CheckpointSaver follow one set's score",
          "[trainer][validation_sets]") {
  tfx::temp_dir scratch;
  TwoSets run;
  auto& [easy, hard, model, sgd, train, sets] = run;
  ValidationEpochRunner val;
  // Any hard/loss below the threshold stops at once; the best is named by the set's score.
  Trainer trainer(model, train, val, {.epochs = 3, .work_dir = scratch.path},
                  EarlyStopping({.monitor = "hard/loss", .stopping_threshold = 1e9}),
                  CheckpointSaver({.interval = 100, .save_best = "hard/loss"}));
  const auto result = trainer.fit(regression_data(4, 4), sets, mse);
  CHECK(result.completed_epochs == 1);
  CHECK_THAT(result.stop_reason, Contains("hard/loss"));
  CHECK(trainer.hooks().get<1>().best_file() == "best_hard_loss_epoch_1.pt");
  CHECK(std::filesystem::exists(scratch.path / "best_hard_loss_epoch_1.pt"));

  // A monitor that names no set's score is refused with the scores there are.
  ReduceLROnPlateau plateau(sgd);
  Trainer plateaued(model, train, val, {.epochs = 1, .scheduler = &plateau, .monitor = "loss"});
  CHECK_THROWS_WITH(
      plateaued.fit(regression_data(1, 4), sets, mse),
      Contains("monitor 'loss' is not a validation score (scores: easy/loss, hard/loss)"));
}

TEST_CASE("validations between batches run over every set, a ProgressBar names each",
          "[trainer][validation_sets][val_interval_steps]") {
  std::ostringstream out;
  ProgressBar bar{{.refresh = 100, .stream = &out}};
  const auto a = regression_data(2, 4, 0.0, 7);
  const auto b = regression_data(1, 4, 0.0, 8);
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd, {}, hookforge::ref(bar));
  ValidationEpochRunner val({}, hookforge::ref(bar), SeenSets{});
  Trainer trainer(model, train, val, {.epochs = 1, .val_interval = 0, .val_interval_steps = 2});
  trainer.fit(regression_data(6, 4), validation_sets{named_loader{"a", a}, named_loader{"b", b}},
              mse);
  // After updates 2 and 4 (between batches), then 6 (the epoch's last).
  CHECK(val.hooks().get<1>().sets == std::vector<std::string>{"a", "b", "a", "b", "a", "b"});
  CHECK_THAT(out.str(), Contains("val a epoch 1/1 done: 2 batches"));
  CHECK_THAT(out.str(), Contains("val b epoch 1/1 done: 1 batches"));
  CHECK_THAT(out.str(), Contains("train epoch 1/1 done: 6 batches"));
}

TEST_CASE("validation set names are checked", "[trainer][validation_sets][errors]") {
  const auto data = regression_data(1, 4);
  using sets = validation_sets<const std::vector<Entry>>;
  CHECK_THROWS_WITH(sets(std::vector<named_loader<const std::vector<Entry>>>{}),
                    Contains("give at least one named loader"));
  CHECK_THROWS_WITH((sets{named_loader{"a/b", data}}),
                    Contains("without '/' (its scores are \"<name>/<score>\"), got \"a/b\""));
  CHECK_THROWS_WITH((sets{named_loader{"", data}}), Contains("got \"\""));
  CHECK_THROWS_WITH((sets{named_loader{"a", data}, named_loader{"a", data}}),
                    Contains("the name \"a\" is given twice"));
}
