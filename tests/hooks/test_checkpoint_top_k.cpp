// Tests of CheckpointSaver's save_top_k (hooks/checkpoint_saver.hpp, detail/top_k.hpp): the k
// best files on disk after each epoch, ties as Lightning breaks them, names from
// best_filename_tmpl, the bookkeeping through a resume (and from a checkpoint written before
// save_top_k), and the options refused. tests/peers/parity.py compares the files with
// Lightning's ModelCheckpoint over many runs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>  // torch before Catch: glog defines CHECK too
#include <catch2/catch.hpp>

#include "hookforge/hooks/checkpoint_saver.hpp"

#include "../torch/file_testing.hpp"

namespace {

using Catch::Contains;
using hookforge::checkpoint_saver_options;
using hookforge::CheckpointSaver;
using hookforge::state_map;
using hookforge::TrainerContext;

/// The trainer as CheckpointSaver sees it: a checkpoint is a small file; the saver's state at
/// each save is kept by file name (what a resume from that file loads).
struct StandIn final : hookforge::detail::trainer_actions {
  const CheckpointSaver* saver = nullptr;
  std::map<std::string, state_map> saved;
  void save_checkpoint(const std::filesystem::path& path, hookforge::checkpoint_content) override {
    std::ofstream(path) << "checkpoint\n";
    saved[path.filename().string()] = saver->state_dict();
  }
};

/// The best_ files in `dir`, sorted.
std::vector<std::string> best_files_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& item : std::filesystem::directory_iterator(dir))
    if (item.path().filename().string().starts_with("best")) out.push_back(item.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

/// Runs `scores` (one validation per epoch) through `saver`, from epoch `first`.
void run(CheckpointSaver& saver, StandIn& trainer, const std::filesystem::path& dir,
         const std::vector<double>& scores, std::size_t first = 0) {
  trainer.saver = &saver;
  for (std::size_t e = first; e < scores.size(); ++e) {
    TrainerContext ctx;
    ctx.epoch = static_cast<std::int64_t>(e);
    ctx.completed_epochs = ctx.epoch + 1;
    ctx.global_step = 10 * ctx.completed_epochs;
    ctx.total_epochs = static_cast<std::int64_t>(scores.size());
    ctx.validated = true;
    ctx.val_scores = {{"acc", scores[e]}};
    ctx.work_dir = dir;
    ctx.trainer = &trainer;
    saver.save_epoch(ctx);
  }
}

}  // namespace

TEST_CASE("save_top_k keeps the k best, ties broken as Lightning's ModelCheckpoint", "[hooks]") {
  tfx::temp_dir dir;
  const checkpoint_saver_options options{
      .interval = 0, .save_last = false, .save_best = "acc", .save_top_k = 2};
  CheckpointSaver saver(options);
  StandIn trainer;
  // 2: {1, 2}; 3 beats the worst (1); 4 ties 2 and beats 3, which leaves; 5 beats the worst
  // of the tie 2 and 4: 2, kept longer, leaves.
  run(saver, trainer, dir.path, {0.1, 0.3, 0.2, 0.3, 0.5});
  CHECK(best_files_in(dir.path) ==
        std::vector<std::string>{"best_acc_epoch_4.pt", "best_acc_epoch_5.pt"});
  CHECK(saver.best_files() ==
        std::vector<std::string>{"best_acc_epoch_4.pt", "best_acc_epoch_5.pt"});
  CHECK(saver.best_file() == "best_acc_epoch_5.pt");
  CHECK(saver.best_score() == 0.5);

  SECTION("resumed from the file of any epoch that wrote one, the same files") {
    const std::vector<double> scores{0.1, 0.3, 0.2, 0.3, 0.5};
    for (std::size_t at = 1; at < scores.size(); ++at) {
      const auto name = fmt::format("best_acc_epoch_{}.pt", at);
      tfx::temp_dir again;
      CheckpointSaver before(options);
      StandIn first;
      run(before, first, again.path,
          std::vector<double>(scores.begin(), scores.begin() + static_cast<long>(at)));
      if (!first.saved.count(name)) continue;  // epoch `at` wrote no best file
      CheckpointSaver resumed(options);        // a new process, from the state in that file
      resumed.load_state_dict(first.saved.at(name));
      StandIn second;
      run(resumed, second, again.path, scores, at);
      CHECK(resumed.best_files() == saver.best_files());
      CHECK(best_files_in(again.path) == best_files_in(dir.path));
    }
  }
}

TEST_CASE("save_top_k: the first of equal best scores stays the best, NaN never enters",
          "[hooks]") {
  tfx::temp_dir dir;
  CheckpointSaver saver({.interval = 0, .save_last = false, .save_best = "acc", .save_top_k = 3});
  StandIn trainer;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  run(saver, trainer, dir.path, {nan, 0.4, 0.4, nan, 0.1});
  CHECK(saver.best_files() == std::vector<std::string>{"best_acc_epoch_2.pt", "best_acc_epoch_3.pt",
                                                       "best_acc_epoch_5.pt"});
  CHECK(saver.best_file() == "best_acc_epoch_2.pt");
}

TEST_CASE("save_top_k -1 keeps every scored checkpoint, best_filename_tmpl names them", "[hooks]") {
  tfx::temp_dir dir;
  CheckpointSaver saver({.interval = 0,
                         .save_last = false,
                         .save_best = "acc",
                         .save_top_k = -1,
                         .best_filename_tmpl = "{metric}={score:.2f}-e{epoch}-s{step}.pt"});
  StandIn trainer;
  run(saver, trainer, dir.path, {0.25, 0.125, 0.5});
  CHECK(best_files_in(dir.path).empty());  // none starts with "best"
  std::vector<std::string> all;
  for (const auto& item : std::filesystem::directory_iterator(dir.path))
    all.push_back(item.path().filename());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::string>{"acc=0.12-e2-s20.pt", "acc=0.25-e1-s10.pt",
                                        "acc=0.50-e3-s30.pt", "last_checkpoint"});
  CHECK(saver.best_file() == "acc=0.50-e3-s30.pt");
}

TEST_CASE("save_top_k: a file of the template the bookkeeping does not know is removed",
          "[hooks]") {
  // A run resumed from an older checkpoint: a best file the interrupted run wrote later is
  // not in the loaded bookkeeping, and goes when the top k change.
  tfx::temp_dir dir;
  const checkpoint_saver_options options{
      .interval = 0,
      .save_last = false,
      .save_best = "acc",
      .save_top_k = 2,
      .best_filename_tmpl = "top_{metric}_{score:.3f}_{epoch}.pt"};
  std::ofstream(dir.path / "top_acc_0.900_7.pt") << "from a later epoch of the first run\n";
  std::ofstream(dir.path / "top_loss_0.900_7.pt") << "another score's: stays\n";
  std::ofstream(dir.path / "top_acc_notes.txt") << "not a checkpoint name: stays\n";
  CheckpointSaver saver(options);
  StandIn trainer;
  run(saver, trainer, dir.path, {0.5, 0.25});
  CHECK(!std::filesystem::exists(dir.path / "top_acc_0.900_7.pt"));
  CHECK(std::filesystem::exists(dir.path / "top_loss_0.900_7.pt"));
  CHECK(std::filesystem::exists(dir.path / "top_acc_notes.txt"));
  CHECK(std::filesystem::exists(dir.path / "top_acc_0.500_1.pt"));
  CHECK(std::filesystem::exists(dir.path / "top_acc_0.250_2.pt"));
}

TEST_CASE("a checkpoint written before save_top_k loads with its one best file", "[hooks]") {
  CheckpointSaver saver({.save_best = "acc", .save_top_k = 2});
  state_map old{{"kept", hookforge::string_list({"epoch_3.pt"})},
                {"last", std::string("epoch_3.pt")},
                {"best_metric", std::string("acc")},
                {"best_score", 0.75},
                {"best_file", std::string("best_acc_epoch_2.pt")},
                {"stale", hookforge::string_list({})}};
  saver.load_state_dict(old);
  CHECK(saver.best_files() == std::vector<std::string>{"best_acc_epoch_2.pt"});
  CHECK(saver.best_score() == 0.75);

  // A refused checkpoint (lists of different lengths) leaves the hook as it was.
  state_map bad = old;
  bad["best_score"] = 0.5;
  bad["top_k_files"] = hookforge::string_list({"a_1.pt", "b_2.pt"});
  bad["top_k_scores"] = c10::List<double>(std::vector<double>{0.5});
  CHECK_THROWS_WITH(saver.load_state_dict(bad), Contains("differ in length"));
  CHECK(saver.best_score() == 0.75);
  CHECK(saver.best_files() == std::vector<std::string>{"best_acc_epoch_2.pt"});
}

TEST_CASE("save_top_k and best_filename_tmpl out of range are errors naming them", "[hooks]") {
  auto saver = [](checkpoint_saver_options o) { CheckpointSaver s(std::move(o)); };
  CHECK_THROWS_WITH(saver({.save_best = "acc", .save_top_k = 0}),
                    Contains("CheckpointSaver: save_top_k must be -1") && Contains("got 0"));
  CHECK_THROWS_WITH(saver({.save_best = "acc", .save_top_k = -2}), Contains("save_top_k"));
  CHECK_THROWS_WITH(
      saver({.save_best = "acc", .best_filename_tmpl = "best_{metric}.pt"}),
      Contains("best_filename_tmpl must be a file name numbered by {epoch} or {step}") &&
          Contains("got \"best_{metric}.pt\""));
  CHECK_THROWS_WITH(saver({.save_best = "acc", .best_filename_tmpl = "best_{loss}_{epoch}.pt"}),
                    Contains("best_filename_tmpl"));
  CHECK_THROWS_WITH(saver({.save_best = "acc", .best_filename_tmpl = "a/{epoch}.pt"}),
                    Contains("best_filename_tmpl"));
  // Without save_best there is nothing to rank (Lightning's ModelCheckpoint refuses it too).
  CHECK_THROWS_WITH(
      saver({.save_top_k = 3}),
      Contains("save_top_k keeps the k best by save_best, which is empty") && Contains("got 3"));
  CHECK_THROWS_WITH(saver({.best_filename_tmpl = "top_{epoch}.pt"}),
                    Contains("best_filename_tmpl names the best checkpoints, and save_best is "
                             "empty"));
}
