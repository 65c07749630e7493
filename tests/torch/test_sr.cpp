// Super-resolution parts: the procedural image dataset (determinism, ranges, the fields'
// relations), ESPCN (shapes, the residual option, options), the losses against values
// computed by hand, WeightedSum's terms in the scores, and an end-to-end check that a
// briefly trained ESPCN beats bicubic upscaling.
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/loader.hpp"
#include "hookforge/torch/data/procedural_images.hpp"
#include "hookforge/torch/losses/charbonnier.hpp"
#include "hookforge/torch/losses/l1.hpp"
#include "hookforge/torch/losses/mse.hpp"
#include "hookforge/torch/losses/weighted_sum.hpp"
#include "hookforge/torch/metrics/psnr.hpp"
#include "hookforge/torch/models/espcn.hpp"
#include "hookforge/torch/models/mlp.hpp"
#include "hookforge/torch/models/patch_discriminator.hpp"

#include <catch2/catch.hpp>

#include "file_testing.hpp"

using namespace hookforge;

namespace {

namespace F = torch::nn::functional;

torch::Tensor bicubic_of(const torch::Tensor& lr, std::int64_t side) {
  return F::interpolate(lr.unsqueeze(0), F::InterpolateFuncOptions()
                                             .size(std::vector<std::int64_t>{side, side})
                                             .mode(torch::kBicubic)
                                             .align_corners(false))
      .squeeze(0);
}

bool same_sample(const Entry& a, const Entry& b) {
  for (const char* name : {"input", "target", "bicubic"})
    if (!torch::equal(a.at(name), b.at(name))) return false;
  return true;
}

/// output [1, 2, 3, 4] against target [2, 2, 1, 8]: differences -1, 0, 2, -4.
Entry four_pixels() {
  return Entry{{"output", torch::tensor({1.0, 2.0, 3.0, 4.0}).reshape({1, 1, 2, 2})},
               {"target", torch::tensor({2.0, 2.0, 1.0, 8.0}).reshape({1, 1, 2, 2})}};
}

double value(const torch::Tensor& t) {
  REQUIRE(t.dim() == 0);
  return t.item<double>();
}

}  // namespace

static_assert(hookforge::dataset<ProceduralImages>);
static_assert(hookforge::criterion<L1Loss> && hookforge::criterion<MSELoss> &&
              hookforge::criterion<CharbonnierLoss> && hookforge::criterion<WeightedSum>);

TEST_CASE("ProceduralImages: a sample is a function of (seed, index) only", "[sr][data]") {
  const procedural_images_options options{.count = 40, .size = 32, .scale = 2, .seed = 5};
  ProceduralImages data(options);
  REQUIRE(data.size() == 40);

  SECTION("the same (seed, index) gives the same tensors, in any order, from any thread") {
    ProceduralImages other(options);
    const Entry late = other.get(17);  // drawn first here, after others there
    std::vector<Entry> serial;
    for (std::size_t i = 0; i < data.size(); ++i) serial.push_back(data.get(i));
    CHECK(same_sample(serial[17], late));

    std::vector<Entry> a(data.size()), b(data.size());
    std::thread t1([&] {
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = data.get(i);
    });
    std::thread t2([&] {
      for (std::size_t i = b.size(); i-- > 0;) b[i] = data.get(i);
    });
    t1.join();
    t2.join();
    for (std::size_t i = 0; i < data.size(); ++i) {
      CHECK(same_sample(serial[i], a[i]));
      CHECK(same_sample(serial[i], b[i]));
    }
  }
  SECTION("another index or another seed gives another image") {
    for (std::size_t i = 1; i < data.size(); ++i)
      CHECK_FALSE(torch::equal(data.get(0).at("target"), data.get(i).at("target")));
    auto reseeded = options;
    reseeded.seed = 6;
    CHECK_FALSE(
        torch::equal(data.get(3).at("target"), ProceduralImages(reseeded).get(3).at("target")));
    // torch's global generator plays no part.
    torch::manual_seed(123);
    auto before = data.get(3).at("target");
    torch::rand({100});
    CHECK(torch::equal(before, data.get(3).at("target")));
  }
  SECTION("past the end is std::out_of_range") { CHECK_THROWS_AS(data.get(40), std::out_of_range); }
  SECTION("cached: the same tensors, views of images shared by copies of the dataset") {
    auto cached_options = options;
    cached_options.cache = true;
    const ProceduralImages cached(cached_options);
    for (std::size_t i : {0u, 17u, 39u})
      for (const auto& [field, tensor] : data.get(i))
        CHECK(torch::equal(tensor, cached.get(i).at(field)));
    const ProceduralImages copy = cached;  // shares the images, drawn once
    CHECK(copy.get(5).at("target").data_ptr() == cached.get(5).at("target").data_ptr());
    CHECK(torch::equal(copy.get(5).at("input"), data.get(5).at("input")));
    CHECK_THROWS_AS(cached.get(40), std::out_of_range);
  }
}

TEST_CASE("ProceduralImages without bicubic: input and target only, the same images",
          "[sr][data]") {
  const procedural_images_options with{.count = 12, .size = 16, .scale = 2, .seed = 3};
  auto without = with;
  without.bicubic = false;
  CHECK(ProceduralImages(with).field_names() ==
        std::vector<std::string>{"input", "target", "bicubic"});
  CHECK(ProceduralImages(without).field_names() == std::vector<std::string>{"input", "target"});
  for (bool cache : {false, true}) {
    auto a = with, b = without;
    a.cache = b.cache = cache;
    const ProceduralImages full(a), slim(b);
    const std::vector<std::size_t> indices{7, 0, 11};
    for (const Entry& got : {slim.get(5), slim.get_batch(indices)})
      CHECK(got.names() == std::vector<std::string>{"input", "target"});
    for (const char* field : {"input", "target"}) {
      CHECK(torch::equal(slim.get(5).at(field), full.get(5).at(field)));
      CHECK(torch::equal(slim.get_batch(indices).at(field), full.get_batch(indices).at(field)));
    }
  }
  // The cache keeps target and input: 1.25 size^2 floats a sample instead of 2.25.
  auto cached = without;
  cached.cache = true;
  CHECK(cached.cached_bytes() == 12 * (16 * 16 + 8 * 8) * sizeof(float));
  cached.bicubic = true;
  CHECK(cached.cached_bytes() == 12 * (2 * 16 * 16 + 8 * 8) * sizeof(float));
}

TEST_CASE("ProceduralImages: shapes, ranges, box-downscaled input, clamped bicubic", "[sr][data]") {
  for (std::int64_t scale : {2, 3, 4}) {
    const std::int64_t side = 12 * scale;
    ProceduralImages data({.count = 16, .size = side, .scale = scale, .seed = 1});
    for (std::size_t i = 0; i < data.size(); ++i) {
      const Entry s = data.get(i);
      CHECK(s.names() == std::vector<std::string>{"input", "target", "bicubic"});
      const auto &input = s.at("input"), &target = s.at("target"), &bicubic = s.at("bicubic");
      CHECK(input.sizes() == torch::IntArrayRef{1, side / scale, side / scale});
      CHECK(target.sizes() == torch::IntArrayRef{1, side, side});
      CHECK(bicubic.sizes() == torch::IntArrayRef{1, side, side});
      for (const auto& t : {input, target, bicubic}) {
        CHECK(t.dtype() == torch::kFloat);
        CHECK(t.min().item<float>() >= 0.0f);
        CHECK(t.max().item<float>() <= 1.0f);
      }
      // Not a flat image: shapes and textures over a gradient.
      CHECK(target.std().item<double>() > 0.05);
      CHECK(torch::allclose(input, torch::avg_pool2d(target, {scale, scale})));
      CHECK(torch::equal(bicubic, bicubic_of(input, side).clamp(0.0, 1.0)));
    }
  }

  SECTION("through the DataLoader: batches of [B, 1, h, w]") {
    ProceduralImages data({.count = 10, .size = 16, .scale = 2});
    DataLoader loader(data, {.batch_size = 4});
    auto batch = *loader.begin();
    CHECK(batch.at("input").sizes() == torch::IntArrayRef{4, 1, 8, 8});
    CHECK(batch.at("bicubic").sizes() == torch::IntArrayRef{4, 1, 16, 16});
  }
  SECTION("options out of range are std::invalid_argument naming the option") {
    auto error = [](procedural_images_options o) {
      return tfx::error_of<std::invalid_argument>([&] { ProceduralImages{o}; });
    };
    CHECK(error({.count = 0}) == "ProceduralImages: count must be >= 1, got 0");
    CHECK(error({.scale = 1}) == "ProceduralImages: scale must be >= 2, got 1");
    CHECK(error({.size = 25, .scale = 2}) ==
          "ProceduralImages: size must be a positive multiple of scale 2, got 25");
    CHECK(error({.size = 0, .scale = 2}) ==
          "ProceduralImages: size must be a positive multiple of scale 2, got 0");
  }
}

TEST_CASE("ESPCN: [N, C, H, W] -> [N, C, sH, sW], residual adds bicubic, options checked",
          "[sr][models]") {
  torch::manual_seed(0);
  SECTION("shapes and parameters") {
    ESPCN model;  // scale 2, 1 channel, 64 features
    auto out = model->forward(Entry{{"input", torch::rand({3, 1, 10, 12})}});
    CHECK(out.sizes() == torch::IntArrayRef{3, 1, 20, 24});
    std::int64_t n = 0;
    for (const auto& p : model->parameters()) n += p.numel();
    CHECK(n == (1 * 64 * 25 + 64) + (64 * 32 * 9 + 32) + (32 * 4 * 9 + 4));

    ESPCN colour(espcn_options{.scale = 3, .channels = 3, .features = 8, .input_field = "lr"});
    CHECK(colour->forward(Entry{{"lr", torch::rand({2, 3, 5, 5})}}).sizes() ==
          torch::IntArrayRef{2, 3, 15, 15});
    CHECK(tfx::error_of<std::invalid_argument>([&] {
            colour->forward(torch::rand({2, 1, 5, 5}));
          }) == "ESPCN: input must be [N, 3, H, W], got shape [2, 1, 5, 5]");
  }
  SECTION("residual: the last convolution starts at zero, so the untrained model is bicubic") {
    auto input = torch::rand({2, 1, 8, 8});
    ESPCN residual(espcn_options{.residual = true});
    CHECK(torch::equal(residual->forward(input), bicubic_of(input.squeeze(1), 16).unsqueeze(1)));
    // Without residual, the same weights give zeros (torch's initialisation otherwise).
    ESPCN plain;
    CHECK(plain->conv3->weight.abs().sum().item<double>() > 0);
    torch::NoGradGuard no_grad;
    plain->conv3->weight.zero_();
    plain->conv3->bias.zero_();
    CHECK(torch::equal(plain->forward(input), torch::zeros({2, 1, 16, 16})));
  }
  SECTION("options out of range are std::invalid_argument naming the option") {
    auto error = [](espcn_options o) {
      return tfx::error_of<std::invalid_argument>([&] { ESPCN{o}; });
    };
    CHECK(error({.scale = 1}) == "ESPCN: scale must be >= 2, got 1");
    CHECK(error({.channels = 0}) == "ESPCN: channels must be >= 1, got 0");
    CHECK(error({.features = 1}) == "ESPCN: features must be >= 2, got 1");
  }
}

TEST_CASE("parameter_count() of a model's options is the built model's, without building it",
          "[sr][models]") {
  const auto count = [](const torch::nn::Module& m) {
    double n = 0;
    for (const auto& p : m.parameters()) n += static_cast<double>(p.numel());
    return n;
  };
  for (const auto& o : {espcn_options{}, espcn_options{.scale = 3, .channels = 3, .features = 9},
                        espcn_options{.scale = 4, .features = 2, .residual = true}})
    CHECK(o.parameter_count() == count(*ESPCN(o)));
  for (const auto& o : {mlp_options{}, mlp_options{.in_features = 3, .hidden = {}},
                        mlp_options{.in_features = 2, .hidden = {5, 7, 1}, .out_features = 4}})
    CHECK(o.parameter_count() == count(*MLP(o)));
  for (const auto& o : {patch_discriminator_options{},
                        patch_discriminator_options{.channels = 3, .features = 100, .layers = 5},
                        patch_discriminator_options{.features = 600, .layers = 4},
                        patch_discriminator_options{.features = 512, .layers = 1}})
    CHECK(o.parameter_count() == count(*PatchDiscriminator(o)));
  // What a config may ask for, counted without overflow or a loop per layer.
  CHECK(mlp_options{.hidden = {1LL << 40, 1LL << 40}}.parameter_count() > 1e24);
  CHECK(patch_discriminator_options{.layers = 1LL << 40}.parameter_count() > 1e18);
}

TEST_CASE("L1Loss, MSELoss, CharbonnierLoss: the means written out", "[sr][losses]") {
  const Entry e = four_pixels();  // differences -1, 0, 2, -4
  CHECK(value(L1Loss{}(e)) == Approx((1.0 + 0 + 2 + 4) / 4));
  CHECK(value(MSELoss{}(e)) == Approx((1.0 + 0 + 4 + 16) / 4));
  CHECK(value(CharbonnierLoss{.eps = 1.0}(e)) ==
        Approx((std::sqrt(2.0) + 1 + std::sqrt(5.0) + std::sqrt(17.0)) / 4));
  const double eps = 1e-3;
  CHECK(value(CharbonnierLoss{}(e)) ==
        Approx((std::sqrt(1 + eps * eps) + eps + std::sqrt(4 + eps * eps) +
                std::sqrt(16 + eps * eps)) /
               4));

  SECTION("other fields; mismatched shapes and a bad eps are errors") {
    Entry renamed{{"sr", e.at("output")}, {"hr", e.at("target")}};
    CHECK(value(L1Loss{.output_field = "sr", .target_field = "hr"}(renamed)) == Approx(1.75));
    Entry mismatched{{"output", torch::zeros({2, 3})}, {"target", torch::zeros({3})}};
    CHECK(tfx::error_of<std::invalid_argument>([&] { MSELoss{}(mismatched); }) ==
          "MSELoss: 'output' and 'target' differ in shape ([2, 3] vs [3])");
    CHECK_THROWS_AS(L1Loss{}(Entry{{"output", torch::zeros({1})}}), std::out_of_range);
    CHECK(tfx::error_of<std::invalid_argument>([&] { CharbonnierLoss{.eps = 0}(e); }) ==
          "CharbonnierLoss: eps must be > 0, got 0");
  }
  SECTION("Charbonnier's gradient is finite where output == target, L1's sign elsewhere") {
    auto out = torch::tensor({0.5, 0.5, 0.9}).requires_grad_();
    auto target = torch::tensor({0.5, 0.1, 0.1});
    CharbonnierLoss{}(Entry{{"output", out}, {"target", target}}).backward();
    auto g = out.grad();
    CHECK(g[0].item<double>() == 0.0);
    CHECK(g[1].item<double>() == Approx(1.0 / 3).epsilon(1e-4));  // d/dx ~ sign / n
    CHECK(g[2].item<double>() == Approx(1.0 / 3).epsilon(1e-4));
  }
}

TEST_CASE("WeightedSum: weighted terms under their names, summed into the loss", "[sr][losses]") {
  WeightedSum criterion{{
      {.name = "l1", .weight = 1.0, .loss = L1Loss{}},
      {.name = "mse", .weight = 0.5, .loss = MSELoss{}},
  }};
  const loss_terms terms = criterion(four_pixels());
  REQUIRE(terms.size() == 2);
  CHECK(value(terms.at("l1")) == Approx(1.75));
  CHECK(value(terms.at("mse")) == Approx(0.5 * 5.25));
  CHECK(value(total_loss(terms)) == Approx(1.75 + 2.625));

  SECTION("each term is a score of the epoch, beside the total") {
    std::vector<Entry> data{
        Entry{{"input", four_pixels().at("output")}, {"target", four_pixels().at("target")}}};
    auto identity = [](const Entry& b) { return b.at("input"); };
    ValidationEpochRunner val(inference_options{});
    auto scores = val.run_epoch(identity, data, 0, criterion).scores;
    CHECK(scores.at("l1") == Approx(1.75));
    CHECK(scores.at("mse") == Approx(2.625));
    CHECK(scores.at("loss") == Approx(4.375));
  }
  SECTION("bad terms are std::invalid_argument naming the term") {
    auto error = [](std::vector<weighted_term> terms) {
      return tfx::error_of<std::invalid_argument>([&] { WeightedSum{terms}(four_pixels()); });
    };
    CHECK(error({}) == "WeightedSum: needs at least one term");
    CHECK(error({{.name = "", .loss = L1Loss{}}}) == "WeightedSum: term 0 has an empty name");
    CHECK(error({{.name = "loss", .loss = L1Loss{}}}) ==
          "WeightedSum: a term must not be named 'loss' (the runners' name for the total)");
    CHECK(error({{.name = "a", .loss = L1Loss{}}, {.name = "a", .loss = MSELoss{}}}) ==
          "WeightedSum: term name 'a' is given twice");
    CHECK(error({{.name = "a", .weight = std::nan(""), .loss = L1Loss{}}}) ==
          "WeightedSum: term 'a' has weight nan; it must be finite");
    CHECK(error({{.name = "a", .loss = {}}}) == "WeightedSum: term 'a' has no loss");
  }
}

TEST_CASE("ESPCN trained a few epochs on procedural images beats bicubic upscaling", "[sr][slow]") {
  torch::manual_seed(0);
  ProceduralImages train_data({.count = 256, .size = 32, .scale = 2, .seed = 1});
  ProceduralImages val_data({.count = 64, .size = 32, .scale = 2, .seed = 2});
  DataLoader train_loader(train_data, {.batch_size = 16, .shuffle = true, .seed = 3});
  DataLoader val_loader(val_data, {.batch_size = 64});
  ESPCN model(espcn_options{.features = 32, .residual = true});
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  TrainingEpochRunner train(adam, {});
  ValidationEpochRunner validate(inference_options{
      .metrics = {PSNR{}, PSNR{.output_field = "bicubic", .name = "bicubic_psnr"}}});
  Trainer trainer(model, train, validate, {.epochs = 6});
  auto result = trainer.fit(train_loader, val_loader, MSELoss{});
  const double psnr = result.val_scores.at("psnr"), bicubic = result.val_scores.at("bicubic_psnr");
  INFO("validation PSNR " << psnr << " dB, bicubic " << bicubic << " dB");
  CHECK(psnr > bicubic + 0.3);
}
