// MetricsPlot: its options, the panels and script it makes of metrics.csv, drawing with
// gnuplot in a run, when it draws (interval, min_seconds), and its faults.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "../torch/fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#include "../torch/file_testing.hpp"
#include "hookforge/hooks/loss_logger.hpp"
#include "hookforge/hooks/metrics_plot.hpp"
#include "../torch/skip.hpp"

using namespace tfx;
using namespace hookforge;

TEST_CASE("MetricsPlot: wrong options are errors at construction, naming the option",
          "[hooks][plot]") {
  using Catch::Contains;
  auto plot = [](metrics_plot_options o) { MetricsPlot p(std::move(o)); };
  CHECK_THROWS_WITH(plot({.interval = -1}), Contains("MetricsPlot: interval must be >= 0"));
  CHECK_THROWS_WITH(plot({.csv = ""}), Contains("MetricsPlot: csv must be a file name"));
  CHECK_THROWS_WITH(plot({.csv = "../../etc/passwd"}),
                    Contains("MetricsPlot: csv must be a file name in out_dir (no '/')"));
  CHECK_THROWS_WITH(plot({.filename = ".."}),
                    Contains("MetricsPlot: filename must be a file name"));
  CHECK_THROWS_WITH(plot({.panels = {}}),
                    Contains("MetricsPlot: panels must name at least one word"));
  CHECK_THROWS_WITH(plot({.panels = {"loss", ""}}), Contains("MetricsPlot: panels must be words"));
  CHECK_THROWS_WITH(plot({.width = 0}), Contains("MetricsPlot: width and panel_height"));
  CHECK_THROWS_WITH(plot({.min_seconds = -1}),
                    Contains("MetricsPlot: min_seconds must be a finite number >= 0, got -1"));
  CHECK_THROWS_WITH(plot({.timeout_seconds = 0}),
                    Contains("MetricsPlot: timeout_seconds must be > 0"));
}

namespace {

/// Whether `program` is found in PATH.
bool in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((std::filesystem::path(dir) / program).c_str(), X_OK) == 0)
      return true;
  return false;
}

bool is_png(const std::filesystem::path& file) {
  return read_bytes(file).starts_with(std::string_view("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace

TEST_CASE(
    "MetricsPlot: loss and PSNR panels from metrics.csv (empty, NaN and infinite cells skipped)",
    "[hooks][plot]") {
  auto records = hookforge::detail::metrics_table::parse_csv(
      "epoch,train_loss,val_loss,val_psnr,val_bicubic_psnr,val_ssim,lr,epoch_seconds,closs\n"
      "1,0.5,,,,,0.01,1.5,1\n"
      "2,0.25,0.3,24.5,23.9,0.8,0.01,1.4,1\n"
      "3,nan,0.2,inf,23.9,0.81,0.01,1.4,1\n");
  auto panels = hookforge::detail::plot::panels_of(records, {"loss", "PSNR", "fid"});
  REQUIRE(panels);
  REQUIRE(panels->size() == 2);  // no fid column: no panel
  const auto& loss = (*panels)[0];
  REQUIRE(loss.curves.size() == 2);  // not closs: panels take whole words
  CHECK(loss.curves[0].name == "train_loss");
  CHECK(loss.curves[0].points == std::vector<std::pair<double, double>>{{1, 0.5}, {2, 0.25}});
  CHECK(loss.curves[1].points == std::vector<std::pair<double, double>>{{2, 0.3}, {3, 0.2}});
  const auto& psnr = (*panels)[1];
  REQUIRE(psnr.curves.size() == 2);
  CHECK(psnr.curves[0].name == "val_psnr");
  CHECK(psnr.curves[0].points.size() == 1);
  CHECK(psnr.curves[1].name == "val_bicubic_psnr");
  CHECK_FALSE(hookforge::detail::plot::panels_of(
      hookforge::detail::metrics_table::parse_csv("step,loss\n1,2\n"), {"loss"}));

  auto script = hookforge::detail::plot::script(*panels, "/tmp/it's.png", {});
  CHECK_THAT(script, Catch::Contains("set output '/tmp/it''s.png'"));
  CHECK_THAT(script, Catch::Contains("set multiplot layout 2,1"));
  CHECK_THAT(script, Catch::Contains("title 'val_bicubic_psnr'"));
  CHECK_THAT(script, Catch::Contains("noenhanced"));  // train_loss, not train subscript loss
}

TEST_CASE("MetricsPlot: metrics.png drawn with gnuplot after LossLogger's row, atomically",
          "[hooks][plot]") {
  if (!in_path("gnuplot")) HOOKFORGE_SKIP("gnuplot is not in PATH (Debian: gnuplot-nox)");
  temp_dir dir("hookforge_plot");
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner val(inference_options{});
  LossLogger logger({.stream = nullptr});
  MetricsPlot plot;                                                // min_seconds 30
  MetricsPlot every({.min_seconds = 0, .filename = "every.png"});  // each epoch
  // Attached before the logger: the priorities order them (LossLogger BELOW_NORMAL, MetricsPlot
  // LOWEST).
  Trainer trainer(model, train, val, {.epochs = 3, .val_interval = 2, .work_dir = dir.path},
                  hookforge::ref(plot), hookforge::ref(every), hookforge::ref(logger));
  auto data = regression_data(2, 4);
  capture_warnings warnings;
  trainer.fit(data, data, mse);
  CHECK(warnings.messages.empty());
  CHECK(every.drawn() == 3);  // each epoch; not again at on_training_finished
  CHECK(plot.drawn() == 1);   // at on_training_finished: 3 epochs took less than 30 s
  CHECK(is_png(dir.path / "metrics.png"));
  CHECK(is_png(dir.path / "every.png"));
  CHECK(dir.files() == std::vector<std::string>{"every.png", "metrics.csv", "metrics.jsonl",
                                                "metrics.png"});  // no temp left

  // A CSV with PSNR columns: two panels, a taller image than the loss-only one.
  temp_dir sr("hookforge_plot_sr");
  std::ofstream(sr.path / "metrics.csv")
      << "epoch,train_loss,val_loss,val_psnr,val_bicubic_psnr,lr,epoch_seconds\n"
         "1,0.05,0.04,24.1,25.0,0.001,2\n2,0.02,0.018,26.2,25.0,0.001,2\n"
         "3,0.01,0.009,27.9,25.0,0.001,2\n";
  MetricsPlot sr_plot;
  REQUIRE(sr_plot.draw(sr.path));
  CHECK(is_png(sr.path / "metrics.png"));
  auto height =
      [](const std::filesystem::path& png) {  // IHDR: width at 16, height at 20, big-endian
        auto bytes = read_bytes(png);
        REQUIRE(bytes.size() > 24);
        std::uint32_t h = 0;
        for (int i = 20; i < 24; ++i)
          h = (h << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
        return h;
      };
  CHECK(height(sr.path / "metrics.png") == 720);
  CHECK(height(dir.path / "metrics.png") == 360);
  CHECK(warnings.messages.empty());
}

TEST_CASE("MetricsPlot: no gnuplot, a failing or hanging one, no CSV: a warning, training goes on",
          "[hooks][plot]") {
  temp_dir dir("hookforge_plot_faults");
  std::ofstream(dir.path / "metrics.csv") << "epoch,train_loss\n1,0.5\n2,0.25\n";
  capture_warnings warnings;

  MetricsPlot missing({.gnuplot = "hookforge-no-such-gnuplot"});
  CHECK_FALSE(missing.draw(dir.path));
  CHECK_FALSE(missing.draw(dir.path));  // not tried again, not said again
  REQUIRE(warnings.messages.size() == 1);
  CHECK_THAT(warnings.messages[0],
             Catch::Contains("MetricsPlot: 'hookforge-no-such-gnuplot' not found in PATH "
                             "(Debian: gnuplot-nox)"));

  warnings.messages.clear();
  MetricsPlot failing({.gnuplot = "false"});
  CHECK_FALSE(failing.draw(dir.path));
  CHECK_FALSE(failing.draw(dir.path));
  REQUIRE(warnings.messages.size() == 1);  // the same failure is said once
  CHECK_THAT(warnings.messages[0], Catch::Contains("metrics.png: false failed: exit status 1"));

  warnings.messages.clear();
  auto slow = dir.path / "slow.sh";
  std::ofstream(slow) << "#!/bin/sh\nexec sleep 30\n";
  std::filesystem::permissions(slow, std::filesystem::perms::owner_all);
  MetricsPlot hanging({.gnuplot = slow.string(), .timeout_seconds = 0.2});
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(hanging.draw(dir.path));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  REQUIRE(warnings.messages.size() == 1);
  CHECK_THAT(warnings.messages[0],
             Catch::Contains("slow.sh failed: no exit within 0.2 s (killed)"));
  CHECK(dir.files() == std::vector<std::string>{"metrics.csv", "slow.sh"});  // no image, no temp

  warnings.messages.clear();
  temp_dir empty("hookforge_plot_empty");
  MetricsPlot no_csv;
  CHECK_FALSE(no_csv.draw(empty.path));
  REQUIRE(warnings.messages.size() == 1);
  CHECK_THAT(warnings.messages[0], Catch::Contains("metrics.csv' to draw (attach a LossLogger)"));

  // In a run: a missing gnuplot costs one warning line and nothing else.
  warnings.messages.clear();
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val, {.epochs = 3, .work_dir = empty.path},
                  LossLogger({.stream = nullptr}),
                  MetricsPlot({.gnuplot = "hookforge-no-such-gnuplot"}));
  auto data = regression_data(2, 4);
  CHECK(trainer.fit(data, data, mse).completed_epochs == 3);
  CHECK(warnings.messages.size() == 1);
  CHECK_FALSE(std::filesystem::exists(empty.path / "metrics.png"));
}

TEST_CASE(
    "MetricsPlot: during training it draws once the epochs since its last drawing took "
    "min_seconds, and at the end",
    "[hooks][plot]") {
  if (!in_path("gnuplot")) HOOKFORGE_SKIP("gnuplot is not in PATH (Debian: gnuplot-nox)");
  temp_dir dir("hookforge_plot_seconds");
  std::ofstream(dir.path / "metrics.csv") << "epoch,train_loss\n1,0.5\n2,0.25\n";
  // `epochs` epochs of 12 s each, as the Trainer reports them in epoch_seconds, then the end
  // of training; the images written.
  auto drawings = [&](metrics_plot_options options, std::int64_t epochs) {
    MetricsPlot plot(std::move(options));
    TrainerContext ctx;
    ctx.work_dir = dir.path;
    for (std::int64_t e = 1; e <= epochs; ++e) {
      ctx.completed_epochs = e;
      ctx.epoch_seconds = 12;
      plot.plot(ctx, points::on_trainer_epoch_finished{});
    }
    plot.plot(ctx, points::on_training_finished{});
    return plot.drawn();
  };
  capture_warnings warnings;
  CHECK(drawings({}, 7) == 3);                    // after epochs 3 and 6 (36 s each), and 7
  CHECK(drawings({.min_seconds = 0}, 7) == 7);    // every epoch; the end draws nothing new
  CHECK(drawings({.min_seconds = 12}, 3) == 3);   // an epoch of exactly min_seconds draws
  CHECK(drawings({.min_seconds = 100}, 7) == 1);  // 84 s in all: only the end
  CHECK(drawings({.interval = 2}, 7) == 2);       // epoch 4 (48 s), and 7 at the end
  CHECK(drawings({.interval = 0, .min_seconds = 0}, 7) == 1);  // only the end
  CHECK(warnings.messages.empty());
}
