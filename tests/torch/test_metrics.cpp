// Metrics apart from the loss: PSNR, SSIM, MAE, MSE, Accuracy against values computed by
// hand, in the runners' scores (per-sample means over unequal batches), as the trainer's
// monitor, in the GAN runner, and without host reads.
#include <catch2/catch.hpp>

#include "file_testing.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "skip.hpp"
#include "hookforge/torch/data/host_read.hpp"
#include "hookforge/torch/metrics/accuracy.hpp"
#include "hookforge/torch/metrics/mae.hpp"
#include "hookforge/torch/metrics/metric.hpp"
#include "hookforge/torch/metrics/mse.hpp"
#include "hookforge/torch/metrics/psnr.hpp"
#include "hookforge/torch/metrics/ssim.hpp"

using namespace hookforge;
using namespace tfx;

namespace {

double value(const torch::Tensor& t) {
  REQUIRE(t.dim() == 0);
  return t.item<double>();
}

/// A (N, 1, 2, 2) batch of zeros and a target that differs from it by `diff[i]` on `pixels[i]`
/// pixels.
Entry offset_pair(const std::vector<double>& diff, const std::vector<int>& pixels) {
  const auto n = static_cast<std::int64_t>(diff.size());
  auto output = torch::zeros({n, 1, 2, 2});
  auto target = torch::zeros({n, 1, 2, 2});
  for (std::int64_t i = 0; i < n; ++i) target[i].view(-1).narrow(0, 0, pixels[i]).fill_(diff[i]);
  return Entry{{"output", output}, {"target", target}};
}

/// SSIM written out as the published formula, one window position at a time, in double:
/// the 11x11 Gaussian window (sigma 1.5, normalised), valid positions only, the map
/// averaged over positions and channels, then over the batch's samples.
double direct_ssim(const torch::Tensor& x_in, const torch::Tensor& y_in, double data_range) {
  auto x = x_in.to(torch::kDouble).contiguous();
  auto y = y_in.to(torch::kDouble).contiguous();
  auto X = x.accessor<double, 4>();
  auto Y = y.accessor<double, 4>();
  double g[11], gsum = 0;
  for (int i = 0; i < 11; ++i) gsum += g[i] = std::exp(-(i - 5.0) * (i - 5.0) / (2 * 1.5 * 1.5));
  const double c1 = std::pow(0.01 * data_range, 2), c2 = std::pow(0.03 * data_range, 2);
  double batch_total = 0;
  for (int n = 0; n < x.size(0); ++n) {
    double total = 0;
    int count = 0;
    for (int c = 0; c < x.size(1); ++c)
      for (int i = 0; i + 11 <= x.size(2); ++i)
        for (int j = 0; j + 11 <= x.size(3); ++j) {
          double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
          for (int u = 0; u < 11; ++u)
            for (int v = 0; v < 11; ++v) {
              const double w = g[u] * g[v] / (gsum * gsum);
              const double a = X[n][c][i + u][j + v], b = Y[n][c][i + u][j + v];
              mx += w * a;
              my += w * b;
              sxx += w * a * a;
              syy += w * b * b;
              sxy += w * a * b;
            }
          const double vx = sxx - mx * mx, vy = syy - my * my, cov = sxy - mx * my;
          total +=
              (2 * mx * my + c1) * (2 * cov + c2) / ((mx * mx + my * my + c1) * (vx + vy + c2));
          ++count;
        }
    batch_total += total / count;
  }
  return batch_total / static_cast<double>(x.size(0));
}

/// The identity model: its output is its input.
auto identity = [](const Entry& e) { return e.at("input"); };

/// Records, at each validation step, whether "psnr" is a 0-dim, detached, float32 score.
struct BatchScoreProbe {
  std::vector<bool>* ok;
  void see(InferenceContext& ctx) {
    const auto& s = ctx.batch_scores.at("psnr");
    ok->push_back(s.dim() == 0 && !s.requires_grad() && s.scalar_type() == torch::kFloat &&
                  s.device() == ctx.device);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_step));
};

struct NoUpdates {
  void veto(TrainingContext& ctx) { ctx.skip_optimizer_step = true; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_post_backward));
};

}  // namespace

TEST_CASE("PSNR: 10 log10(range^2 / MSE) per sample, averaged, and crop_border trims the edges",
          "[metrics]") {
  // One pixel of four off by 0.1: MSE = 0.01 / 4 = 0.0025, PSNR = 10 log10(1 / 0.0025) = 10
  // log10(400).
  CHECK(value(PSNR{}(offset_pair({0.1}, {1}))) == Approx(10 * std::log10(400.0)).epsilon(1e-6));
  // Per sample, then the mean: MSEs 0.0025 and 0.04 give 10 log10(400) and 10 log10(25), whose
  // mean is 10 log10(10000) / 2 = 20 dB (the PSNR of the mean MSE, 0.02125, would be 16.73 dB).
  CHECK(value(PSNR{}(offset_pair({0.1, 0.2}, {1, 4}))) == Approx(20.0).epsilon(1e-6));
  // 8-bit range: every pixel off by 5, MSE 25, PSNR = 10 log10(255^2 / 25) = 10 log10(2601).
  CHECK(value(PSNR{.data_range = 255}(offset_pair({5.0}, {4}))) ==
        Approx(10 * std::log10(2601.0)).epsilon(1e-6));
  // Identical: +inf, as BasicSR and scikit-image.
  CHECK(std::isinf(value(PSNR{}(offset_pair({0.0}, {4})))));

  SECTION("crop_border") {
    // A 4x4 image whose 1-pixel border is off by 1 and whose centre 2x2 has one pixel off by 0.1:
    // with crop_border 1 only the centre counts, MSE 0.0025 again.
    auto output = torch::zeros({1, 1, 4, 4});
    auto target = torch::ones({1, 1, 4, 4});
    target.index_put_({0, 0, torch::indexing::Slice(1, 3), torch::indexing::Slice(1, 3)}, 0.0);
    target.index_put_({0, 0, 1, 1}, 0.1);
    Entry e{{"output", output}, {"target", target}};
    CHECK(value(PSNR{.crop_border = 1}(e)) == Approx(10 * std::log10(400.0)).epsilon(1e-6));
    // Uncropped: 12 border pixels off by 1 plus 0.01: MSE = 12.01 / 16.
    CHECK(value(PSNR{}(e)) == Approx(10 * std::log10(16 / 12.01)).epsilon(1e-6));
    CHECK(tfx::error_of<std::invalid_argument>([&] { PSNR{.crop_border = 2}(e); }) ==
          "PSNR: crop_border 2 leaves nothing of a 4 x 4 image (width x height)");
  }
  SECTION("field names, checks") {
    Entry e{{"sr", torch::zeros({2, 3})}, {"hr", torch::full({2, 3}, 0.1)}};
    CHECK(value(PSNR{.output_field = "sr", .target_field = "hr"}(e)) == Approx(20.0).epsilon(1e-6));
    CHECK(tfx::error_of<std::invalid_argument>([] { PSNR{.data_range = 0}.validate(); }) ==
          "PSNR: data_range must be > 0, got 0");
    CHECK(tfx::error_of<std::invalid_argument>([] { PSNR{.crop_border = -1}.validate(); }) ==
          "PSNR: crop_border must be >= 0, got -1");
    Entry wrong{{"output", torch::zeros({2, 3})}, {"target", torch::zeros({2, 1, 3})}};
    CHECK(tfx::error_of<std::invalid_argument>([&] { PSNR{}(wrong); }) ==
          "PSNR: 'output' and 'target' differ in shape ([2, 3] vs [2, 1, 3])");
  }
}

TEST_CASE("MAE and MSE: mean |x - y| and mean (x - y)^2", "[metrics]") {
  // Differences 1, 0, -2, 0 and 0, 0, 0, 3: MAE (1 + 2 + 3) / 8, MSE (1 + 4 + 9) / 8.
  Entry e{{"output", torch::tensor({{1.0, 2.0, 3.0, 4.0}, {0.0, 0.0, 0.0, 3.0}})},
          {"target", torch::tensor({{0.0, 2.0, 5.0, 4.0}, {0.0, 0.0, 0.0, 0.0}})}};
  CHECK(value(MAE{}(e)) == Approx(6.0 / 8));
  CHECK(value(MSE{}(e)) == Approx(14.0 / 8));
  CHECK(MAE{}(e).scalar_type() == torch::kFloat);  // double inputs, float32 metric
}

TEST_CASE("SSIM: 1 for identical images, the closed form for flat ones, the formula written out",
          "[metrics]") {
  torch::manual_seed(7);
  auto x = torch::rand({2, 3, 16, 15});
  SECTION("identical images: every term of the map is p / p") {
    CHECK(value(SSIM{}(Entry{{"output", x}, {"target", x.clone()}})) == Approx(1.0).margin(1e-6));
  }
  SECTION("flat images a and b: variances are 0, so SSIM = (2ab + C1) / (a^2 + b^2 + C1)") {
    const double a = 0.2, b = 0.6, c1 = 0.01 * 0.01;
    Entry e{{"output", torch::full({1, 1, 12, 12}, a)}, {"target", torch::full({1, 1, 12, 12}, b)}};
    CHECK(value(SSIM{}(e)) == Approx((2 * a * b + c1) / (a * a + b * b + c1)).epsilon(1e-5));
  }
  SECTION("noisy images against a direct loop over window positions") {
    auto y = (x + 0.3 * torch::randn_like(x)).clamp(0, 1);
    const double expected = direct_ssim(x, y, 1.0);
    CHECK(expected > 0.3);
    CHECK(expected < 0.9);
    CHECK(value(SSIM{}(Entry{{"output", x}, {"target", y}})) == Approx(expected).epsilon(1e-5));
    // 8-bit range and a border crop: the same formula on the cropped images, C1, C2 from 255.
    auto x8 = x * 255, y8 = y * 255;
    using torch::indexing::Slice;
    const double cropped =
        direct_ssim(x8.index({Slice(), Slice(), Slice(2, -2), Slice(2, -2)}),
                    y8.index({Slice(), Slice(), Slice(2, -2), Slice(2, -2)}), 255.0);
    CHECK(value(SSIM{.data_range = 255, .crop_border = 2}(Entry{{"output", x8}, {"target", y8}})) ==
          Approx(cropped).epsilon(1e-5));
    // (N, H, W) is one channel.
    CHECK(value(SSIM{}(Entry{{"output", x.select(1, 0)}, {"target", y.select(1, 0)}})) ==
          Approx(direct_ssim(x.narrow(1, 0, 1), y.narrow(1, 0, 1), 1.0)).epsilon(1e-5));
  }
  SECTION("checks") {
    Entry small{{"output", torch::zeros({1, 1, 12, 12})}, {"target", torch::zeros({1, 1, 12, 12})}};
    CHECK(tfx::error_of<std::invalid_argument>([&] { SSIM{.crop_border = 1}(small); }) ==
          "SSIM: images must be at least 11x11 (after crop_border), got 10x10");
    CHECK(tfx::error_of<std::invalid_argument>([] { SSIM{.data_range = -1}.validate(); }) ==
          "SSIM: data_range must be > 0, got -1");
  }
}

TEST_CASE("y_channel: PSNR and SSIM on the BT.601 Y of RGB images, as scikit-image computes them",
          "[metrics]") {
  // skimage 0.19's rgb2ycbcr(...)[..., 0] of both images, cropped by 2, then
  // peak_signal_noise_ratio(data_range=255) and structural_similarity(gaussian_weights=True,
  // sigma=1.5, use_sample_covariance=False): 21.856486085446196 and 0.9275563238081006.
  auto pattern = [](std::int64_t k) {
    auto i = torch::arange(3 * 16 * 16, torch::kFloat64).reshape({1, 3, 16, 16});
    return torch::fmod(i * k, 64) / 63;
  };
  const auto x = pattern(37), y = 0.8 * x + 0.2 * pattern(41);
  const Entry entry{{"output", x.to(torch::kFloat)}, {"target", y.to(torch::kFloat)}};
  CHECK(value(PSNR{.crop_border = 2, .y_channel = true}(entry)) ==
        Approx(21.856486085446196).epsilon(1e-5));
  CHECK(value(SSIM{.crop_border = 2, .y_channel = true}(entry)) ==
        Approx(0.9275563238081006).epsilon(1e-5));
  // The same on the 0-255 scale: Y's offset scales with data_range.
  const Entry wide{{"output", entry.at("output") * 255}, {"target", entry.at("target") * 255}};
  CHECK(value(PSNR{.data_range = 255, .crop_border = 2, .y_channel = true}(wide)) ==
        Approx(21.856486085446196).epsilon(1e-5));
  CHECK_THROWS_WITH((PSNR{.y_channel = true}(Entry{{"output", torch::zeros({1, 1, 4, 4})},
                                                   {"target", torch::zeros({1, 1, 4, 4})}})),
                    "PSNR: y_channel compares RGB images, (N, 3, H, W), but 'output' has shape "
                    "[1, 1, 4, 4]");
}

TEST_CASE("Accuracy: argmax ties go to the lower class, top-k ranks the target", "[metrics]") {
  auto scores = torch::tensor({{0.1, 0.7, 0.2},    // target 1: best
                               {0.5, 0.5, 0.0},    // target 1: tied with class 0, which ranks first
                               {0.5, 0.5, 0.0},    // target 0: tied, ranks first
                               {0.6, 0.3, 0.1}});  // target 2: third
  auto target = torch::tensor({1, 1, 0, 2});
  Entry e{{"output", scores}, {"target", target}};
  CHECK(value(Accuracy{}(e)) == Approx(2.0 / 4));
  CHECK(value((scores.argmax(1) == target).to(torch::kFloat).mean()) ==
        Approx(2.0 / 4));  // as argmax
  CHECK(value(Accuracy{.top_k = 2}(e)) == Approx(3.0 / 4));
  CHECK(value(Accuracy{.top_k = 3}(e)) == Approx(1.0));

  SECTION("per position (segmentation): a sample's accuracy is its fraction of correct positions") {
    // (N=2, K=2, L=2): sample 0 right at both positions, sample 1 at one of two -> (1 + 0.5) / 2.
    auto seg = torch::tensor({{{0.9, 0.1}, {0.1, 0.9}}, {{0.9, 0.9}, {0.1, 0.1}}});
    auto labels = torch::tensor({{0, 1}, {0, 1}}, torch::kInt);
    CHECK(value(Accuracy{}(Entry{{"output", seg}, {"target", labels}})) == Approx(0.75));
  }
  SECTION("checks") {
    CHECK(tfx::error_of<std::invalid_argument>([] { Accuracy{.top_k = 0}.validate(); }) ==
          "Accuracy: top_k must be >= 1, got 0");
    CHECK(tfx::error_of<std::invalid_argument>([&] { Accuracy{.top_k = 4}(e); }) ==
          "Accuracy: top_k 4 is more than the 3 classes of 'output'");
    Entry floats{{"output", scores}, {"target", target.to(torch::kFloat)}};
    CHECK(tfx::error_of<std::invalid_argument>([&] { Accuracy{}(floats); }) ==
          "Accuracy: 'target' must hold integer class indices, got Float");
    Entry shape{{"output", scores}, {"target", target.unsqueeze(1)}};
    CHECK(
        tfx::error_of<std::invalid_argument>([&] { Accuracy{}(shape); }) ==
        "Accuracy: 'target' must have the shape of 'output' without dimension 1, [4], got [4, 1]");
  }
}

TEST_CASE("metrics as values: names, conversion, float32 without a graph under autocast",
          "[metrics]") {
  std::vector<metric> metrics{PSNR{}, SSIM{},     MAE{},
                              MSE{},  Accuracy{}, PSNR{.crop_border = 4, .name = "psnr_c4"}};
  std::vector<std::string> names;
  for (auto& m : metrics) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"psnr", "ssim", "mae", "mse", "accuracy", "psnr_c4"});
  // Options are checked when a metric is made.
  CHECK(tfx::error_of<std::invalid_argument>([] { metric m = PSNR{.data_range = -1}; }) ==
        "PSNR: data_range must be > 0, got -1");

  auto x = torch::rand({2, 1, 12, 12}, torch::requires_grad());
  auto y = torch::rand({2, 1, 12, 12});
  Entry e{{"output", x.to(torch::kBFloat16)}, {"target", y.to(torch::kBFloat16)}};
  const auto plain = value(SSIM{}(e));
  autocast_guard autocast(torch::kCPU, true);  // bfloat16 convolutions, were the metric not guarded
  auto s = SSIM{}(e);
  CHECK(s.scalar_type() == torch::kFloat);
  CHECK_FALSE(s.requires_grad());
  CHECK(value(s) == plain);
  CHECK_FALSE(PSNR{}(Entry{{"output", x}, {"target", y}}).requires_grad());
}

TEST_CASE("metrics in a validation epoch: per-sample means over unequal batches", "[metrics]") {
  // Batch of 1: one pixel of four off by 0.1 (PSNR 10 log10 400, MAE 0.025).
  // Batch of 3: all pixels off by 0.1, 0.2, 0.01 (PSNR 20, 10 log10 25, 40; MAE 0.1, 0.2, 0.01).
  auto first = offset_pair({0.1}, {1});
  auto second = offset_pair({0.1, 0.2, 0.01}, {4, 4, 4});
  std::vector<Entry> data{Entry{{"input", first.at("output")}, {"target", first.at("target")}},
                          Entry{{"input", second.at("output")}, {"target", second.at("target")}}};
  std::vector<bool> ok;
  ValidationEpochRunner val(inference_options{.metrics = {PSNR{}, MAE{}, MSE{}}},
                            BatchScoreProbe{&ok});
  auto result = val.run_epoch(identity, data, 0, mse);
  // Sample-weighted: (10 log10 400 + 20 + 10 log10 25 + 40) / 4 = (40 + 20 + 40) / 4 = 25,
  // where the mean of the two batch means would be 25.34.
  CHECK(result.scores.at("psnr") == Approx(25.0).epsilon(1e-6));
  CHECK(result.scores.at("mae") == Approx((0.025 + 0.1 + 0.2 + 0.01) / 4).epsilon(1e-6));
  CHECK(result.scores.at("mse") ==
        Approx(result.scores.at("loss")).epsilon(1e-6));  // the same mean
  CHECK(ok == std::vector<bool>{true, true});

  SECTION("InferenceRunner reports metrics without a criterion") {
    InferenceRunner infer(inference_options{.metrics = {MAE{}}});
    auto scores = infer.run_epoch(identity, data, 0).scores;
    CHECK(scores.size() == 1);
    CHECK(scores.at("mae") == Approx(result.scores.at("mae")));
  }
}

TEST_CASE("metrics in a training epoch and as the trainer's monitor", "[metrics]") {
  auto data = regression_data(3, 4);

  SECTION("training scores hold the metric beside the loss") {
    torch::manual_seed(1);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    TrainingEpochRunner train(sgd, training_options{.metrics = {MSE{}, MAE{}}});
    auto scores = train.run_epoch(model, data, 0, mse).scores;
    CHECK(scores.at("mse") == Approx(scores.at("loss")).epsilon(1e-6));
    CHECK(scores.at("mae") > 0);
  }
  SECTION("ReduceLROnPlateau in max mode on \"psnr\"") {
    // The learning rate each epoch used, from the fit's history.
    auto plateau_lrs = [&](bool learning) {
      torch::manual_seed(1);
      Regressor model;
      torch::optim::SGD sgd(model->parameters(), 0.1);
      ReduceLROnPlateau scheduler(
          sgd, plateau_options{.mode = plateau_mode::max, .factor = 0.5, .patience = 1});
      ValidationEpochRunner val(inference_options{.metrics = {PSNR{}}});
      const trainer_options options{.epochs = 6, .scheduler = &scheduler, .monitor = "psnr"};
      fit_result result;
      if (learning) {
        TrainingEpochRunner train(sgd, {});
        result = Trainer(model, train, val, options).fit(data, data, mse);
      } else {
        TrainingEpochRunner train(sgd, {}, NoUpdates{});  // the PSNR cannot improve
        result = Trainer(model, train, val, options).fit(data, data, mse);
      }
      std::vector<double> lrs;
      for (auto& epoch : result.history) {
        CHECK(std::isfinite(epoch.val_scores.at("psnr")));
        lrs.push_back(epoch.learning_rates.at(0));
      }
      return lrs;
    };
    // A constant PSNR: bad epochs 0 (first is best), 1, 2 -> reduce; 1, 2 -> reduce.
    CHECK(plateau_lrs(false) == std::vector<double>{0.1, 0.1, 0.1, 0.05, 0.05, 0.025});
    // A PSNR that rises as the regression learns is an improvement in max mode (were the
    // loss monitored in max mode instead, its fall would reduce the rate).
    CHECK(plateau_lrs(true) == std::vector<double>(6, 0.1));
  }
  SECTION("a stop condition on \"psnr\"") {
    torch::manual_seed(1);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    ValidationLossDidNotImprove stop(2);
    TrainingEpochRunner train(sgd, {}, NoUpdates{});
    ValidationEpochRunner val(inference_options{.metrics = {PSNR{}}});
    Trainer trainer(model, train, val,
                    trainer_options{.epochs = 10, .stop = &stop, .monitor = "psnr"});
    auto result = trainer.fit(data, data, mse);
    CHECK(result.completed_epochs == 3);
    CHECK(result.stop_reason == "stop condition");
  }
}

TEST_CASE("metric names: a clash with a loss term or another metric is an error naming it",
          "[metrics]") {
  CHECK(tfx::error_of<std::invalid_argument>([] {
          ValidationEpochRunner val(inference_options{.metrics = {MAE{}, MAE{}}});
        }) == "ValidationEpochRunner: metric name 'mae' is given twice; give each metric its own");
  CHECK(tfx::error_of<std::invalid_argument>([] {
          InferenceRunner r(inference_options{.metrics = {MSE{.name = "loss"}}});
        }) == "InferenceRunner: metric 'loss' has the name of a loss score; rename the metric");
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  CHECK(tfx::error_of<std::invalid_argument>([&] {
          TrainingEpochRunner t(sgd, training_options{.metrics = {metric{"x", {}}}});
        }) == "TrainingEpochRunner: metric 'x' has no compute function");
  torch::optim::SGD other(model->parameters(), 0.1);
  CHECK(tfx::error_of<std::invalid_argument>([&] {
          GANTrainingRunner g(sgd, other, gan_options{.metrics = {MAE{.name = "g.mae"}}});
        }) ==
        "GANTrainingRunner: metric 'g.mae' starts with 'g.', which names loss terms; rename the "
        "metric");

  // A criterion term is known only when the criterion runs: the first batch reports it.
  auto data = regression_data(1, 4);
  ValidationEpochRunner val(inference_options{.metrics = {MAE{}}});
  auto criterion = [](const Entry& e) {
    return loss_terms{{"mae", torch::l1_loss(e.at("output"), e.at("target"))}};
  };
  CHECK(tfx::error_of<std::invalid_argument>([&] { val.run_epoch(model, data, 0, criterion); }) ==
        "ValidationEpochRunner: metric 'mae' has the name of a loss term; rename the metric or the "
        "term");
}

TEST_CASE("GAN runner: metrics on the generator's output against the real sample",
          "[metrics][gan]") {
  // G adds a fixed shift (learning rate 0), so the metric is |input + 0.5 - real| averaged.
  struct Shift : torch::nn::Module {
    torch::Tensor b = register_parameter("b", torch::full({1}, 0.5));
    torch::Tensor forward(const Entry& e) { return e.at("input") + b; }
  };
  struct Judge : torch::nn::Module {
    torch::nn::Linear linear = register_module("linear", torch::nn::Linear(1, 1));
    torch::Tensor forward(const Entry& e) { return linear(e.at("input")); }
  };
  Shift g;
  Judge d;
  torch::optim::SGD d_opt(d.parameters(), 0.0), g_opt(g.parameters(), 0.0);
  torch::manual_seed(3);
  std::vector<Entry> data{Entry{{"input", torch::randn({2, 1})}, {"hr", torch::randn({2, 1})}},
                          Entry{{"input", torch::randn({3, 1})}, {"hr", torch::randn({3, 1})}}};
  double expected = 0;
  for (auto& e : data) expected += (e.at("input") + 0.5 - e.at("hr")).abs().sum().item<double>();
  expected /= 5;

  auto bce = [](const torch::Tensor& logits, double label) {
    return torch::binary_cross_entropy_with_logits(logits, torch::full_like(logits, label));
  };
  auto d_loss = [&](const Entry& e) { return bce(e.at("d_real"), 1) + bce(e.at("d_fake"), 0); };
  auto g_loss = [&](const Entry& e) { return bce(e.at("d_fake_for_g"), 1); };
  GANTrainingRunner runner(d_opt, g_opt,
                           gan_options{.step_ratio = 2, .real_field = "hr", .metrics = {MAE{}}});
  auto scores = runner.run_epoch(g, d, data, 0, d_loss, g_loss).scores;
  CHECK(scores.at("mae") == Approx(expected).epsilon(1e-6));  // every batch, though G ran on one
  CHECK(scores.count("d_loss") == 1);
  CHECK(scores.count("g_loss") == 1);
}

TEST_CASE("metrics read nothing on the host during an epoch", "[metrics]") {
  torch::manual_seed(5);
  std::vector<Entry> images, classes;
  for (std::int64_t size : {3, 1, 2}) {
    auto x = torch::rand({size, 2, 12, 12});
    images.push_back(
        Entry{{"input", x}, {"target", (x + 0.05 * torch::randn_like(x)).clamp(0, 1)}});
    classes.push_back(
        Entry{{"input", torch::randn({size, 5})}, {"target", torch::randint(5, {size})}});
  }
  auto zero = [](const Entry& e) { return torch::zeros({}, e.at("input").options()); };

  const auto before = host_reads();
  ValidationEpochRunner image_val(
      inference_options{.metrics = {PSNR{.crop_border = 1}, SSIM{}, MAE{}, MSE{}}});
  auto image_scores = image_val.run_epoch(identity, images, 0, zero).scores;
  InferenceRunner class_val(
      inference_options{.metrics = {Accuracy{}, Accuracy{.top_k = 3, .name = "top3"}}});
  auto class_scores = class_val.run_epoch(identity, classes, 0).scores;
  CHECK(host_reads() == before);
  CHECK(image_scores.size() == 5);  // loss, psnr, ssim, mae, mse
  CHECK(class_scores.at("top3") >= class_scores.at("accuracy"));
}

TEST_CASE("CUDA: metrics on the device equal those on the CPU", "[metrics][cuda]") {
  HOOKFORGE_REQUIRE_CUDA();
  const torch::Device cuda0(torch::kCUDA, 0);
  torch::manual_seed(9);
  auto x = torch::rand({2, 3, 16, 16});
  Entry cpu{{"output", x}, {"target", (x + 0.1 * torch::randn_like(x)).clamp(0, 1)}};
  auto gpu = cpu.to(cuda0);
  for (metric m : std::vector<metric>{PSNR{.crop_border = 2}, SSIM{}, MAE{}, MSE{}}) {
    auto on_gpu = m.compute(gpu);
    CHECK(on_gpu.device() == cuda0);
    CHECK(on_gpu.item<double>() == Approx(m.compute(cpu).item<double>()).epsilon(1e-5));
  }
}
