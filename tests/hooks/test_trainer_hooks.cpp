// The trainer's built-in hooks: CheckpointSaver, EarlyStopping, LossLogger — attached
// statically and as runtime any_hooks, over scripted validation scores, with resumes.
// MetricsPlot's tests are in test_metrics_plot.cpp.

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../torch/fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#include "../torch/file_testing.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/hooks/early_stopping.hpp"
#include "hookforge/hooks/detail/sha256.hpp"
#include "hookforge/hooks/loss_logger.hpp"
#include "hookforge/hooks/tensorboard_logger.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"
#include "hookforge/torch/weights/weights_file.hpp"
#include "../torch/resume_testing.hpp"
#include "../torch/skip.hpp"

using namespace tfx;
using namespace hookforge;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Sets the validation score `name` of each epoch that validates to values[epoch], before
/// the other trainer hooks see it.
struct ScriptedScore {
  std::string name;
  std::vector<double> values;
  static constexpr int priority = hookforge::priority::HIGHEST;
  void set(TrainerContext& ctx) {
    if (ctx.validated) ctx.val_scores[name] = values.at(static_cast<std::size_t>(ctx.epoch));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(set, pts::on_trainer_epoch_finished));
};

struct crash : std::runtime_error {
  crash() : std::runtime_error("crash") {}
};

/// Kills the run after `epochs` epochs, once every other hook has seen the epoch.
struct CrashAfter {
  std::int64_t epochs = -1;
  static constexpr int priority = hookforge::priority::LOWEST;
  void check(TrainerContext& ctx) {
    if (ctx.completed_epochs == epochs) throw crash();
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(check, pts::on_trainer_epoch_finished));
};

enum class attach_mode { by_ref, runtime };

/// One training run of a small regressor with the given trainer-level hooks (shared
/// pointers, attached by ref or as any_hooks), a scripted validation score, an optional
/// crash and an optional checkpoint to start from.
struct run_spec {
  attach_mode mode = attach_mode::by_ref;
  std::filesystem::path dir{};
  std::int64_t epochs = 1;
  std::int64_t val_interval = 1;
  std::string monitor = "loss";
  std::string score_name = "acc";
  std::vector<double> scores{};
  std::int64_t crash_after = -1;
  std::optional<std::filesystem::path> resume_from{};
  int batches = 2;
};

struct run_result {
  fit_result fit;
  bool crashed = false;
};

template <class... Shared>
run_result run(const run_spec& spec, std::shared_ptr<Shared>... hooks) {
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner val(inference_options{});
  trainer_options options{.epochs = spec.epochs,
                          .val_interval = spec.val_interval,
                          .monitor = spec.monitor,
                          .work_dir = spec.dir};
  auto data = regression_data(spec.batches, 4);
  run_result result;
  auto go = [&](auto& trainer) {
    if (spec.resume_from) trainer.load_checkpoint(*spec.resume_from);
    try {
      result.fit = trainer.fit(data, data, mse);
    } catch (const crash&) {
      result.crashed = true;
    }
  };
  ScriptedScore scripted{spec.score_name, spec.scores};
  if (spec.scores.empty()) scripted.values.assign(static_cast<std::size_t>(spec.epochs), 0.0);
  if (spec.mode == attach_mode::by_ref) {
    Trainer trainer(model, train, val, options, scripted, hookforge::ref(*hooks)...,
                    CrashAfter{spec.crash_after});
    go(trainer);
  } else {
    Trainer trainer(model, train, val, options, scripted, CrashAfter{spec.crash_after},
                    runtime_hooks{});
    (trainer.hooks().attach(any_hook<TrainerContext>(hooks)), ...);
    go(trainer);
  }
  return result;
}

std::string mode_name(attach_mode mode) {
  return mode == attach_mode::by_ref ? "by ref" : "as any_hook";
}

bool same_state(const state_map& a, const state_map& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a) {
    auto it = b.find(key);
    if (it == b.end()) return false;
    const auto& other = it->second;
    if (value.isDouble() && other.isDouble()) {
      const double x = value.toDouble(), y = other.toDouble();
      if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
    } else if (value.isList() && other.isList()) {
      if (value.toListRef().size() != other.toListRef().size()) return false;
      for (std::size_t i = 0; i < value.toListRef().size(); ++i)
        if (!(value.toListRef()[i] == other.toListRef()[i])) return false;
    } else if (!(value == other)) {
      return false;
    }
  }
  return true;
}

std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& path) {
  return hookforge::detail::metrics_table::parse_csv(read_bytes(path));
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::vector<std::string> out;
  std::istringstream in(read_bytes(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("metric rules are inferred from whole words of a score's name", "[hooks]") {
  CHECK(infer_metric_rule("psnr") == metric_rule::greater);
  CHECK(infer_metric_rule("val/SSIM") == metric_rule::greater);
  CHECK(infer_metric_rule("accuracy") == metric_rule::greater);
  CHECK(infer_metric_rule("acc_top1") == metric_rule::greater);
  CHECK(infer_metric_rule("bbox_mAP_50") == metric_rule::greater);
  CHECK(infer_metric_rule("f1") == metric_rule::greater);
  CHECK(infer_metric_rule("loss") == metric_rule::less);
  CHECK(infer_metric_rule("heatmap_loss") == metric_rule::less);  // "map" is no word of it
  CHECK(infer_metric_rule("top1_error") == metric_rule::less);    // a cost wins
  CHECK(infer_metric_rule("LPIPS") == metric_rule::less);
  CHECK(infer_metric_rule("rmse") == metric_rule::less);
  CHECK_FALSE(infer_metric_rule("score").has_value());
  CHECK_FALSE(infer_metric_rule("laptop").has_value());
  CHECK(is_better(metric_rule::greater, 2, 1));
  CHECK_FALSE(is_better(metric_rule::greater, 1.05, 1, 0.1));
  CHECK(is_better(metric_rule::less, 0.5, 1, 0.1));
  CHECK_FALSE(is_better(metric_rule::less, kNaN, 1));
  CHECK(is_better(metric_rule::less, 5, kNaN));
  CHECK(is_better_relative(metric_rule::less, 0.89, 1, 0.1));
  CHECK_FALSE(is_better_relative(metric_rule::less, 0.91, 1, 0.1));
  CHECK(is_better_relative(metric_rule::greater, 1.11, 1, 0.1));
  CHECK(is_better_relative(metric_rule::less, 5, worst_score(metric_rule::less), 0.1));
  CHECK_FALSE(is_better_relative(metric_rule::greater, kNaN, 1, 0));
  CHECK(metric_has_word("val_bicubic_PSNR", "psnr"));
  CHECK(metric_has_word("train/loss", "LOSS"));
  CHECK_FALSE(metric_has_word("closs", "loss"));
  CHECK_FALSE(metric_has_word("val_loss", ""));
  CHECK_THROWS_WITH(
      metric_rule_for("X", "score", ""),
      Catch::Contains("X: cannot tell whether a greater or a smaller 'score' is better") &&
          Catch::Contains("rule"));
  CHECK_THROWS_WITH(metric_rule_for("X", "psnr", "max"),
                    Catch::Contains("X: rule must be") && Catch::Contains("max"));
}

TEST_CASE("wrong parameters are errors at construction, naming hook and parameter", "[hooks]") {
  using Catch::Contains;
  auto saver = [](checkpoint_saver_options o) { CheckpointSaver s(std::move(o)); };
  CHECK_THROWS_WITH(saver({.interval = -1}),
                    Contains("CheckpointSaver: interval must be >= 0") && Contains("-1"));
  CHECK_THROWS_WITH(saver({.max_keep_ckpts = 0}), Contains("CheckpointSaver: max_keep_ckpts"));
  CHECK_THROWS_WITH(saver({.max_keep_ckpts = -2}), Contains("CheckpointSaver: max_keep_ckpts"));
  CHECK_THROWS_WITH(saver({.save_begin = -1}), Contains("CheckpointSaver: save_begin"));
  CHECK_THROWS_WITH(saver({.save_best = "score"}),
                    Contains("CheckpointSaver: cannot tell") && Contains("'score'"));
  CHECK_THROWS_WITH(saver({.save_best = "psnr", .rule = "up"}),
                    Contains("CheckpointSaver: rule must be"));
  CHECK_THROWS_WITH(saver({.save_best = "auto", .rule = "up"}),
                    Contains("CheckpointSaver: rule must be"));
  CHECK_THROWS_WITH(saver({.rule = "less"}),
                    Contains("CheckpointSaver: rule must be empty when save_best is"));
  CHECK_THROWS_WITH(saver({.filename_tmpl = "epoch.pt"}),
                    Contains("CheckpointSaver: filename_tmpl"));
  CHECK_THROWS_WITH(saver({.filename_tmpl = "e_{}_{}.pt"}),
                    Contains("CheckpointSaver: filename_tmpl"));
  CHECK_THROWS_WITH(saver({.filename_tmpl = "sub/e_{}.pt"}),
                    Contains("CheckpointSaver: filename_tmpl"));
  CHECK_THROWS_WITH(saver({.published_keys = {"model", "model"}}),
                    Contains("CheckpointSaver: published_keys"));
  CHECK_THROWS_WITH(saver({.published_keys = {""}}), Contains("CheckpointSaver: published_keys"));
  CHECK_THROWS_WITH(saver({.save_last = false, .published_keys = {"model"}}),
                    Contains("CheckpointSaver: published_keys needs save_last or save_best"));
  CHECK_NOTHROW(saver({.interval = 0, .save_best = "auto"}));
  CHECK_NOTHROW(
      saver({.save_best = "val/score", .rule = "greater", .filename_tmpl = "ckpt_{:04d}.pt"}));

  auto stopping = [](early_stopping_options o) { EarlyStopping s(std::move(o)); };
  CHECK_THROWS_WITH(stopping({.patience = 0}),
                    Contains("EarlyStopping: patience must be >= 1, got 0"));
  CHECK_THROWS_WITH(stopping({.min_delta = -0.1}), Contains("EarlyStopping: min_delta"));
  CHECK_THROWS_WITH(stopping({.min_delta = kNaN}), Contains("EarlyStopping: min_delta"));
  CHECK_THROWS_WITH(stopping({.monitor = ""}), Contains("EarlyStopping: monitor"));
  CHECK_THROWS_WITH(stopping({.monitor = "score"}),
                    Contains("EarlyStopping: cannot tell") && Contains("'score'"));
  CHECK_THROWS_WITH(stopping({.monitor = "loss", .rule = "lower"}),
                    Contains("EarlyStopping: rule must be"));
  CHECK_THROWS_WITH(stopping({.stopping_threshold = kNaN}),
                    Contains("EarlyStopping: stopping_threshold"));

  CHECK_THROWS_WITH(LossLogger({.interval = -3}),
                    Contains("LossLogger: interval must be >= 0") && Contains("-3"));
}

TEST_CASE(
    "CheckpointSaver: interval, retention and one best file over many epochs, resumed in the "
    "middle",
    "[hooks]") {
  // Greater is better for "acc" (inferred). N = completed epochs; interval 2, keep 2.
  //   N:   1    2    3    4    5    6    7    8    9
  //   acc .1   .5   .3   .6   .6   .2   .7   .1   .65
  //   best 1    2    -    4    -    -    7    -    -     (5 ties 4: not better)
  //   file -    2    -    4    -    6    -    8    9(last)
  const std::vector<double> acc{.1, .5, .3, .6, .6, .2, .7, .1, .65};
  const checkpoint_saver_options options{.interval = 2, .max_keep_ckpts = 2, .save_best = "acc"};
  const std::vector<std::string> final_files{"best_acc_epoch_7.pt", "epoch_8.pt", "epoch_9.pt",
                                             "last_checkpoint"};

  for (auto mode : {attach_mode::by_ref, attach_mode::runtime}) {
    SECTION(mode_name(mode)) {
      temp_dir straight_dir, resumed_dir;
      auto straight = std::make_shared<CheckpointSaver>(options);
      run({.mode = mode, .dir = straight_dir.path, .epochs = 9, .scores = acc}, straight);
      CHECK(straight_dir.files() == final_files);
      CHECK(straight->kept() == std::vector<std::string>{"epoch_8.pt", "epoch_9.pt"});
      CHECK(straight->best_file() == "best_acc_epoch_7.pt");
      CHECK(straight->best_score() == .7);
      CHECK(read_bytes(straight_dir.path / "last_checkpoint") == "epoch_9.pt\n");
      CHECK(latest_checkpoint(straight_dir.path) == straight_dir.path / "epoch_9.pt");

      // Crash after epoch 7, whose only file is the best one: last_checkpoint names it.
      auto first = std::make_shared<CheckpointSaver>(options);
      auto crashed =
          run({.mode = mode, .dir = resumed_dir.path, .epochs = 9, .scores = acc, .crash_after = 7},
              first);
      REQUIRE(crashed.crashed);
      CHECK(resumed_dir.files() == std::vector<std::string>{"best_acc_epoch_7.pt", "epoch_4.pt",
                                                            "epoch_6.pt", "last_checkpoint"});
      const auto last = latest_checkpoint(resumed_dir.path);
      REQUIRE(last == resumed_dir.path / "best_acc_epoch_7.pt");

      // The checkpoint holds the bookkeeping that names it.
      const auto saved = checkpoint_reader(*last).load_state("hooks.trainer.CheckpointSaver");
      CHECK(saved.at("best_file").toStringRef() == "best_acc_epoch_7.pt");
      CHECK(saved.at("last").toStringRef() == "best_acc_epoch_7.pt");
      CHECK(saved.at("best_score").toDouble() == .7);
      CHECK(saved.at("stale").toListRef().size() ==
            1);  // best_acc_epoch_4.pt, removed after the save

      auto resumed = std::make_shared<CheckpointSaver>(options);
      auto result = run(
          {.mode = mode, .dir = resumed_dir.path, .epochs = 9, .scores = acc, .resume_from = last},
          resumed);
      CHECK_FALSE(result.crashed);
      CHECK(result.fit.completed_epochs == 9);
      CHECK(resumed_dir.files() == final_files);
      CHECK(same_state(resumed->state_dict(), straight->state_dict()));
      CHECK(read_bytes(resumed_dir.path / "last_checkpoint") == "epoch_9.pt\n");
    }
  }
}

TEST_CASE(
    "CheckpointSaver: weights_format writes each checkpoint's model beside it, kept and "
    "removed with it",
    "[hooks][weights]") {
  const std::vector<double> acc{.1, .5, .3, .6, .6, .2, .7, .1, .65};
  temp_dir dir;
  auto saver = std::make_shared<CheckpointSaver>(checkpoint_saver_options{
      .interval = 2, .max_keep_ckpts = 2, .save_best = "acc", .weights_format = "safetensors"});
  run({.mode = attach_mode::by_ref, .dir = dir.path, .epochs = 9, .scores = acc}, saver);
  CHECK(dir.files() == std::vector<std::string>{"best_acc_epoch_7.pt",
                                                "best_acc_epoch_7.safetensors", "epoch_8.pt",
                                                "epoch_8.safetensors", "epoch_9.pt",
                                                "epoch_9.safetensors", "last_checkpoint"});
  // The weights are the checkpoint's model section, bit for bit.
  const auto from_checkpoint = hookforge::read_weights(dir.path / "epoch_9.pt");
  const auto beside = hookforge::read_weights(dir.path / "epoch_9.safetensors");
  CHECK(beside.kind == "safetensors");
  REQUIRE(beside.tensors.size() == from_checkpoint.tensors.size());
  for (std::size_t i = 0; i < beside.tensors.size(); ++i) {
    CHECK(beside.tensors[i].first == from_checkpoint.tensors[i].first);
    CHECK(torch::equal(beside.tensors[i].second, from_checkpoint.tensors[i].second));
  }
  CHECK_THROWS_WITH(
      CheckpointSaver({.weights_format = "onnx"}),
      Catch::Contains("CheckpointSaver: weights_format must be \"safetensors\", \"pth\" or "
                      "empty, got \"onnx\""));
}

TEST_CASE("CheckpointSaver: save_begin, save_last off, a stop ends the run with a last checkpoint",
          "[hooks]") {
  temp_dir dir;
  auto saver = std::make_shared<CheckpointSaver>(checkpoint_saver_options{
      .interval = 3, .save_last = false, .save_begin = 2, .filename_tmpl = "e{:03d}.ckpt"});
  run({.dir = dir.path, .epochs = 9}, saver);
  CHECK(dir.files() ==
        std::vector<std::string>{"e002.ckpt", "e005.ckpt", "e008.ckpt", "last_checkpoint"});

  // An early stop is the run's last epoch: save_last saves it. "auto" is the trainer's monitor.
  temp_dir stopped;
  auto last = std::make_shared<CheckpointSaver>(
      checkpoint_saver_options{.interval = 0, .save_best = "auto"});
  auto stop = std::make_shared<EarlyStopping>(early_stopping_options{.patience = 1});
  auto result = run({.dir = stopped.path,
                     .epochs = 9,
                     .monitor = "psnr",
                     .score_name = "psnr",
                     .scores = {20, 22, 21, 25, 25, 25, 25, 25, 25}},
                    stop, last);
  CHECK(result.fit.completed_epochs == 3);
  CHECK(stopped.files() ==
        std::vector<std::string>{"best_psnr_epoch_2.pt", "epoch_3.pt", "last_checkpoint"});
  CHECK(last->best_score() == 22);
}

TEST_CASE("CheckpointSaver: a checkpoint it wrote after epoch 2 resumes bit-exactly to epoch 4",
          "[hooks][resume]") {
  struct Run {
    Mlp model;
    torch::optim::Adam adam;
    StepLR scheduler;
    TrainingEpochRunner<StepCounter> train;
    ValidationEpochRunner<> val;
    Trainer<Mlp, TrainingEpochRunner<StepCounter>, ValidationEpochRunner<>, CheckpointSaver,
            EarlyStopping>
        trainer;
    Run(int seed, const std::filesystem::path& dir)
        : model((torch::manual_seed(seed), Mlp())),
          adam(model->parameters(), torch::optim::AdamOptions(0.01)),
          scheduler(adam, 1, 0.9),
          train(adam, training_options{.gradient_accumulation_steps = 2}, StepCounter{}),
          val(inference_options{}),
          trainer(model, train, val,
                  trainer_options{.epochs = 4, .scheduler = &scheduler, .work_dir = dir},
                  CheckpointSaver({.save_best = "loss"}), EarlyStopping({.patience = 100})) {}
  };
  ShuffledLoader train_data{regression_data(5, 8, 0.1, 11), {}};
  auto val_data = regression_data(2, 8, 0.1, 12);
  temp_dir a, b;

  torch::manual_seed(100);
  Run straight(7, a.path);
  torch::manual_seed(100);
  straight.trainer.fit(train_data, val_data, mse);
  REQUIRE(std::filesystem::exists(a.path / "epoch_2.pt"));

  Run resumed(99, b.path);  // other weights: everything comes from the checkpoint
  resumed.trainer.load_checkpoint(a.path / "epoch_2.pt");
  CHECK(resumed.trainer.completed_epochs() == 2);
  CHECK(resumed.adam.param_groups()[0].options().get_lr() ==
        Approx(0.01 * 0.9 * 0.9).epsilon(1e-12));
  resumed.trainer.fit(train_data, val_data, mse);

  check_same_training(*straight.model, straight.adam, *resumed.model, resumed.adam);
  CHECK(straight.scheduler.state_dict().at("last_epoch").toInt() ==
        resumed.scheduler.state_dict().at("last_epoch").toInt());
  CHECK(straight.train.hooks().get<0>().steps == resumed.train.hooks().get<0>().steps);
  CHECK(same_state(straight.trainer.hooks().get<0>().state_dict(),
                   resumed.trainer.hooks().get<0>().state_dict()));
  CHECK(same_state(straight.trainer.hooks().get<1>().state_dict(),
                   resumed.trainer.hooks().get<1>().state_dict()));
  // The resumed run wrote the files of epochs 3 and 4 as the straight one did.
  CHECK(same_state(
      checkpoint_reader(a.path / "epoch_4.pt").load_state("hooks.trainer.CheckpointSaver"),
      checkpoint_reader(b.path / "epoch_4.pt").load_state("hooks.trainer.CheckpointSaver")));
}

TEST_CASE("CheckpointSaver: published copies hold the published sections, named by their SHA-256",
          "[hooks]") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

  for (auto mode : {attach_mode::by_ref, attach_mode::runtime}) {
    SECTION(mode_name(mode)) {
      temp_dir dir;
      auto saver = std::make_shared<CheckpointSaver>(checkpoint_saver_options{
          .interval = 1, .max_keep_ckpts = 1, .save_best = "acc", .published_keys = {"model"}});
      run({.mode = mode, .dir = dir.path, .epochs = 3, .scores = {.3, .9, .5}}, saver);
      REQUIRE(saver->published().size() == 2);  // the last (epoch 3) and the best (epoch 2)
      for (const auto& published : saver->published()) {
        const std::string name = published.filename().string();
        const std::string hash = sha256_file(published);
        CHECK(hash == sha256_hex(read_bytes(published)));
        const std::string source =
            name.substr(0, name.size() - std::string("-01234567.pt").size()) + ".pt";
        CHECK(name == source.substr(0, source.size() - 3) + "-" + hash.substr(0, 8) + ".pt");
        checkpoint_reader in(published);
        CHECK(in.sections() == std::vector<std::string>{"model"});
        Regressor from_published, from_source;
        in.load_module("model", *from_published);
        checkpoint_reader(dir.path / source).load_module("model", *from_source);
        CHECK(same(snapshot(*from_published), snapshot(*from_source)));
      }
      CHECK(saver->published()[0].filename().string().starts_with("epoch_3-"));
      CHECK(saver->published()[1].filename().string().starts_with("best_acc_epoch_2-"));
      CHECK(dir.files().size() == 5);  // epoch_3, best, two published copies, last_checkpoint
    }
  }
}

TEST_CASE("copy_checkpoint_sections: a missing section names the file and leaves no output",
          "[hooks]") {
  temp_dir dir;
  Regressor model;
  checkpoint_writer{}.add_module("model", *model).add_int("step", 3).save(dir.path / "full.pt");
  copy_checkpoint_sections(dir.path / "full.pt", dir.path / "step.pt", {"step"});
  CHECK(checkpoint_reader(dir.path / "step.pt").load_int("step") == 3);
  auto message = error_of(
      [&] { copy_checkpoint_sections(dir.path / "full.pt", dir.path / "x.pt", {"model", "ema"}); });
  CHECK_THAT(message, Catch::Contains("full.pt") && Catch::Contains("no section 'ema'"));
  CHECK_FALSE(std::filesystem::exists(dir.path / "x.pt"));
}

TEST_CASE(
    "latest_checkpoint: none without last_checkpoint, and an error naming an empty, garbled, "
    "outside, symlinked or missing one",
    "[hooks]") {
  temp_dir dir;
  CHECK_FALSE(latest_checkpoint(dir.path).has_value());
  checkpoint_writer{}.add_int("step", 1).save(dir.path / "epoch_1.pt");
  const auto last = dir.path / "last_checkpoint";
  const auto write = [&](const std::string& text) {
    std::ofstream(last, std::ios::binary) << text;
  };
  write("epoch_1.pt\n");
  CHECK(latest_checkpoint(dir.path) == dir.path / "epoch_1.pt");
  std::filesystem::create_symlink(dir.path / "epoch_1.pt", dir.path / "link.pt");
  const auto refused = [&](const std::string& text) {
    write(text);
    return error_of<std::runtime_error>([&] { latest_checkpoint(dir.path); });
  };
  CHECK(refused("\n \n") ==
        last.string() + " is empty: it should name the checkpoint to resume from (epoch_N.pt)");
  const auto garbled = last.string() + " should hold the name of a checkpoint file in " +
                       dir.path.string() + ", got ";
  CHECK(refused("epoch_1.pt\x01") == garbled + "'epoch_1.pt\x01'");
  CHECK(refused("../epoch_1.pt") == garbled + "'../epoch_1.pt'");
  CHECK(refused((dir.path / "epoch_1.pt").string()) ==
        garbled + "'" + (dir.path / "epoch_1.pt").string() + "'");
  CHECK(refused("epoch_2.pt\n") == last.string() + " names 'epoch_2.pt', which does not exist");
  CHECK(refused("link.pt") ==
        last.string() + " names 'link.pt', which is not a regular file (a symlink or a directory)");
}

TEST_CASE("EarlyStopping on scripted validation scores", "[hooks]") {
  for (auto mode : {attach_mode::by_ref, attach_mode::runtime}) {
    SECTION(mode_name(mode)) {
      temp_dir dir;
      auto stop_with = [&](early_stopping_options options, std::string name,
                           std::vector<double> scores, std::int64_t val_interval = 1) {
        auto hook = std::make_shared<EarlyStopping>(std::move(options));
        const auto epochs = static_cast<std::int64_t>(scores.size());
        auto result = run({.mode = mode,
                           .dir = dir.path,
                           .epochs = epochs,
                           .val_interval = val_interval,
                           .score_name = name,
                           .scores = scores},
                          hook);
        return std::make_pair(result.fit, hook);
      };
      {  // less is better for a loss; an improvement must exceed min_delta
        auto [fit, hook] = stop_with({.monitor = "loss", .min_delta = 0.005, .patience = 3}, "loss",
                                     {1.0, 0.8, 0.85, 0.9, 0.79, 0.81, 0.82, 0.83, 0.5, 0.4});
        CHECK(fit.completed_epochs == 8);
        CHECK(fit.stop_reason ==
              "EarlyStopping: loss did not improve by more than 0.005 for 3 validation(s) (best "
              "0.79 at epoch 5, "
              "last 0.83)");
        CHECK(hook->best() == 0.79);
        CHECK(hook->wait_count() == 3);
      }
      {  // a tie is no improvement (strict, as Lightning and the trainer's stop condition)
        auto [fit, hook] = stop_with({.monitor = "acc", .patience = 2}, "acc", {.5, .5, .5, .9});
        CHECK(fit.completed_epochs == 3);
      }
      {  // NaN stops at once
        auto [fit, hook] = stop_with({.monitor = "acc"}, "acc", {.5, .6, kNaN, .7});
        CHECK(fit.completed_epochs == 3);
        CHECK(fit.stop_reason ==
              "EarlyStopping: acc = nan at epoch 3 is not finite (best 0.6 at epoch 2)");
      }
      {  // without check_finite, NaN is no improvement (and never the best)
        auto [fit, hook] = stop_with({.monitor = "acc", .patience = 2, .check_finite = false},
                                     "acc", {.5, kNaN, kNaN, .7});
        CHECK(fit.completed_epochs == 3);
        CHECK(hook->best() == .5);
        CHECK_THAT(fit.stop_reason, Catch::Contains("did not improve"));
      }
      {  // a threshold reached
        auto [fit, hook] =
            stop_with({.monitor = "psnr", .stopping_threshold = 30.0}, "psnr", {25, 30, 31, 32});
        CHECK(fit.completed_epochs == 3);
        CHECK(fit.stop_reason ==
              "EarlyStopping: psnr = 31 at epoch 3 is greater than stopping_threshold 30");
      }
      {  // only epochs that validated count: validation every 2 epochs
        auto [fit, hook] =
            stop_with({.monitor = "acc", .patience = 2}, "acc", {9, .5, 9, .4, 9, .3, 9, .9}, 2);
        CHECK(fit.completed_epochs == 6);
        CHECK(hook->best_epoch() == 2);
      }
    }
  }
}

TEST_CASE("EarlyStopping: a missing monitor warns once, or is an error when strict", "[hooks]") {
  temp_dir dir;
  {
    capture_warnings warnings;
    auto hook = std::make_shared<EarlyStopping>(early_stopping_options{.monitor = "psnr"});
    auto result = run({.dir = dir.path, .epochs = 3, .score_name = "acc"}, hook);
    CHECK(result.fit.completed_epochs == 3);
    REQUIRE(warnings.messages.size() == 1);
    CHECK_THAT(warnings.messages[0],
               Catch::Contains("EarlyStopping: monitor 'psnr' is not a validation score") &&
                   Catch::Contains("acc, loss"));
  }
  auto strict =
      std::make_shared<EarlyStopping>(early_stopping_options{.monitor = "psnr", .strict = true});
  CHECK_THROWS_WITH(run({.dir = dir.path, .epochs = 3}, strict),
                    Catch::Contains("EarlyStopping: monitor 'psnr' is not a validation score"));
}

TEST_CASE(
    "EarlyStopping's state survives a resume: the resumed run stops where the straight one did",
    "[hooks][resume]") {
  const std::vector<double> acc{.1, .4, .3, .35, .38, .2, .39, .1, .9, .9};
  for (auto mode : {attach_mode::by_ref, attach_mode::runtime}) {
    SECTION(mode_name(mode)) {
      temp_dir a, b;
      const early_stopping_options options{.monitor = "auto", .patience = 4};
      auto straight = std::make_shared<EarlyStopping>(options);
      auto fit = run({.mode = mode, .dir = a.path, .epochs = 10, .monitor = "acc", .scores = acc},
                     straight, std::make_shared<CheckpointSaver>())
                     .fit;
      CHECK(fit.completed_epochs == 6);  // best .4 at epoch 2; 3, 4, 5, 6 do not improve

      auto first = std::make_shared<EarlyStopping>(options);
      run({.mode = mode,
           .dir = b.path,
           .epochs = 10,
           .monitor = "acc",
           .scores = acc,
           .crash_after = 4},
          first, std::make_shared<CheckpointSaver>());
      CHECK(first->wait_count() == 2);
      auto resumed = std::make_shared<EarlyStopping>(options);
      auto again = run({.mode = mode,
                        .dir = b.path,
                        .epochs = 10,
                        .monitor = "acc",
                        .scores = acc,
                        .resume_from = latest_checkpoint(b.path)},
                       resumed, std::make_shared<CheckpointSaver>())
                       .fit;
      CHECK(again.completed_epochs == 6);
      CHECK(again.stop_reason == fit.stop_reason);
      CHECK(same_state(resumed->state_dict(), straight->state_dict()));
    }
  }
}

TEST_CASE(
    "LossLogger: console lines, CSV and JSONL rows, widened columns, no duplicates after a resume",
    "[hooks][resume]") {
  for (auto mode : {attach_mode::by_ref, attach_mode::runtime}) {
    SECTION(mode_name(mode)) {
      temp_dir a, b;
      // Validation every 2 epochs; 3 batches per epoch, a step row every 2 batches.
      auto logged_run = [&](const std::filesystem::path& dir, std::int64_t crash_after,
                            std::optional<std::filesystem::path> resume, std::ostream& out) {
        auto logger =
            std::make_shared<LossLogger>(loss_logger_options{.interval = 2, .stream = &out});
        torch::manual_seed(3);
        Regressor model;
        torch::optim::SGD sgd(model->parameters(), 0.05);
        ValidationEpochRunner val(inference_options{});
        trainer_options options{.epochs = 4, .val_interval = 2, .work_dir = dir};
        auto data = regression_data(3, 4);
        CheckpointSaver saver({.interval = 2});
        auto go = [&](auto& trainer) {
          if (resume) trainer.load_checkpoint(*resume);
          try {
            trainer.fit(data, data, mse);
          } catch (const crash&) {
          }
        };
        if (mode == attach_mode::by_ref) {
          TrainingEpochRunner train(sgd, {}, hookforge::ref(*logger));
          Trainer trainer(model, train, val, options, hookforge::ref(*logger), saver,
                          CrashAfter{crash_after});
          go(trainer);
        } else {
          TrainingEpochRunner train(sgd, {}, runtime_hooks{});
          train.hooks().attach(any_hook<TrainingContext>(logger));
          Trainer trainer(model, train, val, options, saver, CrashAfter{crash_after},
                          runtime_hooks{});
          trainer.hooks().attach(any_hook<TrainerContext>(logger));
          go(trainer);
        }
      };
      std::ostringstream console;
      logged_run(a.path, -1, std::nullopt, console);
      const std::string text = console.str();
      CHECK_THAT(text, Catch::StartsWith("epoch 1/4 | train loss "));
      CHECK_THAT(text, Catch::Contains("\nepoch 2/4 | train loss ") &&
                           Catch::Contains(" | val loss ") && Catch::Contains(" | lr 0.05 | "));
      CHECK(lines_of(a.path / "metrics.jsonl").size() == 4);

      auto csv = read_csv(a.path / "metrics.csv");
      REQUIRE(csv.size() == 5);
      CHECK(csv[0] ==
            std::vector<std::string>{"epoch", "train_loss", "val_loss", "lr", "epoch_seconds"});
      CHECK(csv[1][0] == "1");
      CHECK(csv[1][2].empty());  // epoch 1 did not validate: the widened column is empty
      CHECK_FALSE(csv[2][2].empty());
      CHECK(csv[1][3] == "0.05");
      auto steps = read_csv(a.path / "steps.csv");
      REQUIRE(steps.size() == 7);  // 12 batches, one row every 2
      CHECK(steps[0] == std::vector<std::string>{"epoch", "batch", "step", "loss", "lr"});
      CHECK(steps[1][0] == "1");
      CHECK(steps[1][1] == "2");
      CHECK(steps[1][2] == "2");
      CHECK(steps[2][0] == "2");  // step 4 is epoch 2's first batch
      CHECK(steps[2][1] == "1");
      const auto first_row = lines_of(a.path / "metrics.jsonl").front();
      CHECK_THAT(first_row, Catch::StartsWith("{\"epoch\": 1, \"train_loss\": ") &&
                                Catch::Contains("\"lr\": 0.05"));

      // Crash after epoch 3 (whose rows are written), resume from epoch 2's checkpoint.
      std::ostringstream ignored;
      logged_run(b.path, 3, std::nullopt, ignored);
      CHECK(lines_of(b.path / "metrics.jsonl").size() == 3);
      logged_run(b.path, -1, b.path / "epoch_2.pt", ignored);
      auto resumed = read_csv(b.path / "metrics.csv");
      REQUIRE(resumed.size() == csv.size());
      for (std::size_t i = 0; i < csv.size(); ++i) {
        CHECK(resumed[i].size() == csv[i].size());
        for (std::size_t j = 0; j + 1 < csv[i].size(); ++j)
          CHECK(resumed[i][j] == csv[i][j]);  // but the time
      }
      CHECK(read_csv(b.path / "steps.csv") == steps);
      CHECK(read_bytes(b.path / "steps.jsonl") == read_bytes(a.path / "steps.jsonl"));
      auto jsonl = lines_of(b.path / "metrics.jsonl");
      REQUIRE(jsonl.size() == 4);
      for (std::size_t i = 0; i < jsonl.size(); ++i)
        CHECK(hookforge::detail::metrics_table::json_counter(jsonl[i], "epoch") ==
              static_cast<std::int64_t>(i + 1));
    }
  }
}

TEST_CASE("LossLogger reads the loss on the host only on its interval", "[hooks]") {
  temp_dir dir;
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  LossLogger logger({.interval = 4, .out_dir = dir.path, .stream = nullptr});
  TrainingEpochRunner train(sgd, {}, hookforge::ref(logger));
  auto data = regression_data(12, 4);
  const auto before = host_reads();
  train.run_epoch(model, data, 0, mse);
  CHECK(host_reads() - before == 3);
  CHECK(lines_of(dir.path / "steps.jsonl").size() == 3);
  CHECK(dir.files() == std::vector<std::string>{"steps.csv", "steps.jsonl"});

  LossLogger quiet({.out_dir = dir.path, .stream = nullptr});
  TrainingEpochRunner other(sgd, {}, hookforge::ref(quiet));
  const auto again = host_reads();
  other.run_epoch(model, data, 0, mse);
  CHECK(host_reads() == again);
}

TEST_CASE("LossLogger never writes through a symlink planted where its log goes", "[hooks]") {
  temp_dir dir, outside;
  const auto target = outside.path / "elsewhere.jsonl";
  std::ofstream(target) << "untouched\n";
  std::filesystem::create_symlink(target, dir.path / "steps.jsonl");
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  LossLogger logger({.interval = 1, .out_dir = dir.path, .stream = nullptr});
  TrainingEpochRunner train(sgd, {}, hookforge::ref(logger));
  auto data = regression_data(2, 4);
  CHECK_THROWS_WITH(train.run_epoch(model, data, 0, mse),
                    Catch::Contains("steps.jsonl': it is a symbolic link, which hookforge does not "
                                    "write through"));
  CHECK(lines_of(target) == std::vector<std::string>{"untouched"});
}

TEST_CASE("default_hooks: progress, log files and checkpoints from one object",
          "[hooks][default_hooks]") {
  tfx::temp_dir dir("hookforge_default_hooks");
  std::ostringstream console, log;
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  default_hooks defaults(
      {.progress = {.refresh = 2, .stream = &console}, .logger = {.stream = &log}});
  TrainingEpochRunner train(sgd, {}, defaults.training());
  ValidationEpochRunner validate(inference_options{}, defaults.validation());
  Trainer trainer(model, train, validate, {.epochs = 3, .work_dir = dir.path}, defaults.trainer());
  auto data = regression_data(4, 8);
  const auto reads_before = host_reads();
  auto result = trainer.fit(data, data, mse);
  CHECK(result.completed_epochs == 3);
  CHECK(result.val_scores.at("loss") < result.history.front().val_scores.at("loss"));  // it learned

  CHECK_THAT(console.str(), Catch::Contains("train"));
  CHECK_THAT(console.str(), Catch::Contains("val"));
  CHECK_THAT(log.str(), Catch::Contains("3/3"));
  for (const char* file :
       {"metrics.csv", "metrics.jsonl", "epoch_1.pt", "epoch_3.pt", "last_checkpoint"})
    CHECK(std::filesystem::exists(dir.path / file));
  CHECK(latest_checkpoint(dir.path) == dir.path / "epoch_3.pt");
  CHECK_FALSE(std::filesystem::exists(dir.path / "tensorboard"));  // attached, switched off
  // The timer's figures are shared with the bar; training and validation both ticked it.
  CHECK(defaults.timer.training().iterations > 0);
  // Host reads: the progress bar's, every 2 batches and at the last, per runner and epoch
  // (4 batches: 2 windows) — nothing per step.
  CHECK(host_reads() - reads_before == 3 * 2 * 2);
}

TEST_CASE("default_hooks with .tensorboard: an event file in the work_dir, no host read per step",
          "[hooks][default_hooks][tensorboard]") {
  tfx::temp_dir dir("hookforge_default_hooks_board");
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  default_hooks defaults({.progress = {.stream = nullptr},
                          .logger = {.stream = nullptr},
                          .tensorboard = tensorboard_logger_options{}});
  TrainingEpochRunner train(sgd, {}, defaults.training());
  ValidationEpochRunner validate(inference_options{}, defaults.validation());
  Trainer trainer(model, train, validate, {.epochs = 2, .work_dir = dir.path}, defaults.trainer());
  auto data = regression_data(4, 8);
  const auto reads_before = host_reads();
  trainer.fit(data, data, mse);
  // The progress bar's, at each epoch's last batch per runner: the logger adds none (epoch
  // scalars are host values; no step scalars or images asked for).
  CHECK(host_reads() - reads_before == 2 * 2);
  const auto file = defaults.tensorboard.file();
  REQUIRE(file.parent_path() == dir.path / "tensorboard");
  CHECK(file.filename().string().starts_with("events.out.tfevents."));
  // Records: 8-byte length, its CRC, the event, its CRC; the first event is the file version.
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 16);
  CHECK(bytes.find("brain.Event:2") == 12 + 11);  // after the header and wall_time's 9 bytes
  CHECK(bytes.find("val/loss") != std::string::npos);
}

TEST_CASE(
    "TensorBoardLogger on the Trainer alone says that step scalars and images need the runners",
    "[hooks][tensorboard]") {
  tfx::temp_dir dir("hookforge_board_alone");
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  TensorBoardLogger board({.interval = 2, .images = 1});
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner validate(inference_options{});
  Trainer trainer(model, train, validate, {.epochs = 2, .work_dir = dir.path},
                  hookforge::ref(board));
  auto data = regression_data(4, 8);
  hookforge::capture_warnings warnings;
  trainer.fit(data, data, mse);
  REQUIRE(warnings.messages.size() == 2);  // once, not per epoch
  CHECK(warnings.messages[0] ==
        "TensorBoardLogger: interval is 2, but no training runner fired it, so there are no step "
        "scalars: attach the same instance to the training runner too (hookforge::ref)");
  CHECK_THAT(warnings.messages[1],
             Catch::Contains("images is 1, but no validation runner fired it"));
  CHECK(std::filesystem::exists(board.file()));
}

TEST_CASE("TensorBoard's CRC-32C and the options' checks", "[hooks][tensorboard]") {
  CHECK(hookforge::detail::tensorboard::crc32c("123456789") ==
        0xE3069283u);  // the standard check value
  CHECK(hookforge::detail::tensorboard::crc32c("") == 0u);
  CHECK_THROWS_WITH(TensorBoardLogger({.interval = -1}),
                    "TensorBoardLogger: interval must be >= 0 (0: no step scalars), got -1");
  CHECK_THROWS_WITH(TensorBoardLogger({.images = 2, .image_fields = {}}),
                    "TensorBoardLogger: image_fields must name at least one field when images > "
                    "0, got none");
  CHECK_THROWS_WITH(TensorBoardLogger({.value_range = {1, 0}}),
                    "TensorBoardLogger: value_range must be finite with low < high, got [1, 0]");
}
