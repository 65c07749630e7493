// Tests for the GAN and image hooks: StepRatio, DWarmup, R1GradientPenalty,
// EdgeEnhancedInput, BatchImageSaver — each attached statically and as an any_hook.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <png.h>

#include "../torch/fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "../torch/file_testing.hpp"

#include <catch2/catch.hpp>

#include "hookforge/hooks/batch_image_saver.hpp"
#include "hookforge/hooks/d_warmup.hpp"
#include "hookforge/hooks/edge_enhanced_input.hpp"
#include "hookforge/hooks/r1_gradient_penalty.hpp"
#include "hookforge/hooks/step_ratio.hpp"

using namespace tfx;
using namespace hookforge;

namespace {

// --- a tiny GAN on vectors: G adds a learnable shift; D is linear, D(x) = w.x + b ----------
struct ShiftImpl : torch::nn::Module {
  explicit ShiftImpl(int dim) : shift(register_parameter("shift", torch::zeros({dim}))) {}
  torch::Tensor forward(const Entry& e) { return e.at("input") + shift; }
  torch::Tensor shift;
};
TORCH_MODULE(Shift);

struct LinearDImpl : torch::nn::Module {
  explicit LinearDImpl(int dim) : linear(register_module("linear", torch::nn::Linear(dim, 1))) {}
  torch::Tensor forward(const Entry& e) { return linear(e.at("input")); }
  torch::nn::Linear linear;
};
TORCH_MODULE(LinearD);

std::vector<Entry> vector_data(int batches, int size, int dim, int seed = 3) {
  torch::manual_seed(seed);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i)
    data.push_back(
        Entry{{"input", torch::randn({size, dim})}, {"target", 2.0 + torch::randn({size, dim})}});
  return data;
}

/// The standard GAN losses (BCE with logits, non-saturating for G), written with softplus.
torch::Tensor d_nonsat(const Entry& e) {
  return torch::softplus(-e.at("d_real")).mean() + torch::softplus(e.at("d_fake")).mean();
}
torch::Tensor g_nonsat(const Entry& e) { return torch::softplus(-e.at("d_fake_for_g")).mean(); }
/// D(x, label) = w.x + label, counting its calls and those that got the label.
struct ConditionalDImpl : torch::nn::Module {
  explicit ConditionalDImpl(int dim) : w(register_parameter("w", torch::randn({dim}))) {}
  torch::Tensor forward(const Entry& e) {
    ++calls;
    calls_with_label += e.contains("label");
    return (e.at("input") * w).sum(1, true) + e.at("label");
  }
  torch::Tensor w;
  std::int64_t calls = 0, calls_with_label = 0;
};
TORCH_MODULE(ConditionalD);

/// Returns its "input" times one (an identity model; a D that scores a sample by itself).
struct IdentityImpl : torch::nn::Module {
  torch::Tensor forward(const Entry& e) { return e.at("input") * 1.0; }
};
TORCH_MODULE(Identity);

/// A D loss with zero gradient, so D's gradient is the extra losses' alone.
torch::Tensor d_zero(const Entry& e) { return 0.0 * (e.at("d_real").sum() + e.at("d_fake").sum()); }

/// Records (global_step, d_stepped, g_stepped) at on_post_step.
struct PhaseProbe {
  std::vector<std::vector<std::int64_t>>* rows;
  void see(GANContext& ctx) { rows->push_back({ctx.global_step, ctx.d_stepped, ctx.g_stepped}); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_step));
};

using Rows = std::vector<std::vector<std::int64_t>>;

/// The rows (global_step, d, g) a schedule `d_due(s)`, `g_due(s)` gives for batches 0..n-1.
template <class D, class G>
Rows schedule_rows(std::int64_t n, D d_due, G g_due) {
  Rows rows;
  for (std::int64_t s = 0; s < n; ++s) rows.push_back({s, d_due(s), g_due(s)});
  return rows;
}

}  // namespace

// ============================================================================ StepRatio

TEST_CASE("StepRatio takes the ratio as the nearest fraction with a bounded denominator",
          "[hooks]") {
  auto frac = [](double r) {
    StepRatio s{r};
    return std::vector<std::int64_t>{s.numerator(), s.denominator()};
  };
  CHECK(frac(1.0) == std::vector<std::int64_t>{1, 1});
  CHECK(frac(0.5) == std::vector<std::int64_t>{1, 2});
  CHECK(frac(1.0 / 3) == std::vector<std::int64_t>{1, 3});
  CHECK(frac(0.1) == std::vector<std::int64_t>{1, 10});
  CHECK(frac(0.4) == std::vector<std::int64_t>{2, 5});
  CHECK(frac(1.5) == std::vector<std::int64_t>{3, 2});
  CHECK(frac(2.0) == std::vector<std::int64_t>{2, 1});
  CHECK(frac(2.0 / 3) == std::vector<std::int64_t>{2, 3});
  CHECK(frac(1e-6) == std::vector<std::int64_t>{1, 1'000'000});
  CHECK(frac(1e6) == std::vector<std::int64_t>{1'000'000, 1});
}

TEST_CASE(
    "StepRatio's schedule: exact counts per period, D first, 1/k is the runner's step_ratio k",
    "[hooks]") {
  SECTION("ratio 0.5: D on every batch, G on batches 1, 3, 5, ...") {
    StepRatio s{0.5};
    for (std::int64_t i = 0; i < 8; ++i) {
      CHECK(s.d_due(i));
      CHECK(s.g_due(i) == (i % 2 == 1));
    }
  }
  SECTION("ratio 2: G on every batch, D on batches 0, 2, 4, ...") {
    StepRatio s{2.0};
    for (std::int64_t i = 0; i < 8; ++i) {
      CHECK(s.g_due(i));
      CHECK(s.d_due(i) == (i % 2 == 0));
    }
  }
  SECTION("1/k reproduces gan_options::step_ratio = k: (s + 1) % k == 0") {
    for (std::int64_t k : {1, 2, 3, 7}) {
      StepRatio s{1.0 / static_cast<double>(k)};
      for (std::int64_t i = 0; i < 100; ++i) CHECK(s.g_due(i) == ((i + 1) % k == 0));
    }
  }
  SECTION("counts over the run: ratio G/D exact at the end of each period") {
    for (double r : {0.3, 0.4, 2.0 / 3, 1.5, 2.5, 3.0}) {
      StepRatio s{r};
      const std::int64_t period = std::max(s.numerator(), s.denominator());
      std::int64_t d = 0, g = 0;
      for (std::int64_t i = 0; i < 10 * period; ++i) {
        d += s.d_due(i);
        g += s.g_due(i);
        CHECK((s.d_due(i) || s.g_due(i)));  // no batch trains neither
      }
      CAPTURE(r);
      CHECK(g * s.denominator() == d * s.numerator());
    }
    StepRatio late{0.3};  // deterministic at any step: the pattern repeats every 10 batches
    for (std::int64_t i = 0; i < 10; ++i) CHECK(late.g_due(1'000'000'000'000 + i) == late.g_due(i));
  }
}

TEST_CASE("StepRatio on the GAN runner: static and any_hook, same as step_ratio, across a resume",
          "[hooks]") {
  auto data = vector_data(3, 4, 2);
  auto run = [&](auto make_runner, int epochs) {
    torch::manual_seed(5);
    Shift g(2);
    LinearD d(2);
    torch::optim::SGD d_opt(d->parameters(), 0.05), g_opt(g->parameters(), 0.05);
    Rows rows;
    auto runner = make_runner(d_opt, g_opt, &rows);
    for (int e = 0; e < epochs; ++e) runner.run_epoch(g, d, data, e, d_nonsat, g_nonsat);
    return std::make_pair(rows, std::vector<std::int64_t>{runner.d_steps(), runner.g_steps()});
  };

  SECTION("ratio 1/3 equals gan_options::step_ratio = 3") {
    auto [by_option, steps_option] = run(
        [](auto& d_opt, auto& g_opt, Rows* rows) {
          return GANTrainingRunner(d_opt, g_opt, gan_options{.step_ratio = 3}, PhaseProbe{rows});
        },
        3);
    auto [by_hook, steps_hook] = run(
        [](auto& d_opt, auto& g_opt, Rows* rows) {
          return GANTrainingRunner(d_opt, g_opt, gan_options{}, StepRatio{1.0 / 3},
                                   PhaseProbe{rows});
        },
        3);
    CHECK(by_hook == by_option);
    CHECK(steps_hook == std::vector<std::int64_t>{9, 3});
  }
  SECTION("ratio 2 as an any_hook: G every batch, D every other") {
    auto [rows, steps] = run(
        [](auto& d_opt, auto& g_opt, Rows* rows) {
          GANTrainingRunner runner(d_opt, g_opt, gan_options{}, PhaseProbe{rows}, runtime_hooks{});
          runner.hooks().attach(any_hook<GANContext>(StepRatio{2.0}), {.strict = true});
          return runner;
        },
        2);
    StepRatio s{2.0};
    CHECK(rows ==
          schedule_rows(6, [&](auto i) { return s.d_due(i); }, [&](auto i) { return s.g_due(i); }));
    CHECK(steps == std::vector<std::int64_t>{3, 6});
  }
  SECTION("a resumed runner continues the schedule (it follows global_step)") {
    torch::manual_seed(5);
    Shift g(2);
    LinearD d(2);
    torch::optim::SGD d_opt(d->parameters(), 0.05), g_opt(g->parameters(), 0.05);
    Rows straight, resumed_rows;
    GANTrainingRunner first(d_opt, g_opt, gan_options{}, StepRatio{0.4}, PhaseProbe{&straight});
    for (int e = 0; e < 4; ++e) first.run_epoch(g, d, data, e, d_nonsat, g_nonsat);

    Rows ignored;
    GANTrainingRunner a(d_opt, g_opt, gan_options{}, StepRatio{0.4}, PhaseProbe{&ignored});
    for (int e = 0; e < 2; ++e) a.run_epoch(g, d, data, e, d_nonsat, g_nonsat);
    GANTrainingRunner b(d_opt, g_opt, gan_options{}, StepRatio{0.4}, PhaseProbe{&resumed_rows});
    b.load_state_dict(through_pickle(a.state_dict()));
    for (int e = 2; e < 4; ++e) b.run_epoch(g, d, data, e, d_nonsat, g_nonsat);
    CHECK(resumed_rows == Rows(straight.begin() + 6, straight.end()));
  }
}

TEST_CASE("StepRatio rejects a ratio outside [1e-6, 1e6]", "[hooks]") {
  for (double bad : {0.0, -1.0, 1e-7, 2e6, std::nan(""), std::numeric_limits<double>::infinity()}) {
    CAPTURE(bad);
    CHECK_THAT(tfx::error_of<std::invalid_argument>([&] { StepRatio{bad}; }),
               Catch::StartsWith("StepRatio: ratio must be"));
  }
}

// ============================================================================ DWarmup

TEST_CASE("DWarmup: the run's first batches train D only, across epochs (static and any_hook)",
          "[hooks]") {
  auto data = vector_data(3, 4, 2);
  torch::manual_seed(5);
  Shift g(2);
  LinearD d(2);
  torch::optim::SGD d_opt(d->parameters(), 0.05), g_opt(g->parameters(), 0.05);
  auto expected = schedule_rows(6, [](auto) { return true; }, [](auto s) { return s >= 4; });

  SECTION("static") {
    Rows rows;
    GANTrainingRunner runner(d_opt, g_opt, gan_options{}, DWarmup{4}, PhaseProbe{&rows});
    for (int e = 0; e < 2; ++e) runner.run_epoch(g, d, data, e, d_nonsat, g_nonsat);
    CHECK(rows == expected);
  }
  SECTION("any_hook") {
    Rows rows;
    GANTrainingRunner runner(d_opt, g_opt, gan_options{}, PhaseProbe{&rows}, runtime_hooks{});
    runner.hooks().attach(any_hook<GANContext>(DWarmup{{.batches = 4}}), {.strict = true});
    for (int e = 0; e < 2; ++e) runner.run_epoch(g, d, data, e, d_nonsat, g_nonsat);
    CHECK(rows == expected);
  }
  SECTION("with StepRatio, attached first: its priority runs it after StepRatio") {
    Rows rows;
    GANTrainingRunner runner(d_opt, g_opt, gan_options{}, DWarmup{4}, StepRatio{0.5},
                             PhaseProbe{&rows});
    for (int e = 0; e < 3; ++e) runner.run_epoch(g, d, data, e, d_nonsat, g_nonsat);
    CHECK(rows ==
          schedule_rows(9, [](auto) { return true; }, [](auto s) { return s >= 4 && s % 2 == 1; }));
  }
  SECTION("filters compose: when(DWarmup, before(3)) holds G on its first two events only") {
    Rows rows;
    GANTrainingRunner runner(d_opt, g_opt, gan_options{},
                             hookforge::when(DWarmup{100}, hookforge::before(3)),
                             PhaseProbe{&rows});
    runner.run_epoch(g, d, data, 0, d_nonsat, g_nonsat);
    CHECK(rows == schedule_rows(3, [](auto) { return true; }, [](auto s) { return s >= 2; }));
  }
  CHECK(tfx::error_of<std::invalid_argument>([] { DWarmup{-1}; }) ==
        "DWarmup: batches must be >= 0, got -1");
}

// ============================================================================ R1GradientPenalty

TEST_CASE("R1 penalty of a linear D: weight/2 ||w||^2, gradient weight * w", "[hooks]") {
  torch::manual_seed(2);
  LinearD d(5);
  auto w = d->linear->weight;  // [1, 5]
  auto real = torch::randn({3, 5});
  auto discriminate = [&](const torch::Tensor& x) { return d->forward(Entry{{"input", x}}); };

  SECTION("sum reduction (the paper's)") {
    R1GradientPenalty r1{{.weight = 4.0}};
    auto p = r1.penalty(discriminate, real);
    CHECK(p.item<double>() == Approx(2.0 * w.pow(2).sum().item<double>()).epsilon(1e-6));
    p.backward();
    CHECK(torch::allclose(w.grad(), 4.0 * w.detach(), 1e-5, 1e-6));
    CHECK((!d->linear->bias.grad().defined() ||
           d->linear->bias.grad().abs().max().item<double>() == 0));
  }
  SECTION("mean reduction divides by the sample's elements; interval scales") {
    R1GradientPenalty r1{{.weight = 4.0, .interval = 3, .reduction = r1_reduction::mean}};
    auto p = r1.penalty(discriminate, real);
    CHECK(p.item<double>() == Approx(3 * 2.0 * w.pow(2).sum().item<double>() / 5).epsilon(1e-6));
    p.backward();
    CHECK(torch::allclose(w.grad(), 3 * 4.0 / 5 * w.detach(), 1e-5, 1e-6));
  }
}

namespace {

/// At on_post_d_backward: D's weight gradient (the extra losses' alone with d_zero), the
/// weight, and the "d.r1" score when there is one.
struct R1Probe {
  std::vector<torch::Tensor>* grads;
  std::vector<torch::Tensor>* weights;
  std::vector<bool>* scored;
  void see(GANContext& ctx) {
    auto w = ctx.d_parameters()[0];
    grads->push_back(w.grad().clone());
    weights->push_back(w.detach().clone());
    scored->push_back(ctx.d_losses.count("r1") == 1);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_d_backward));
};

}  // namespace

TEST_CASE(
    "R1GradientPenalty on the GAN runner: D's gradient is weight * w, every interval (static, "
    "any_hook, state)",
    "[hooks]") {
  auto data = vector_data(3, 4, 3);
  const double weight = 2.0;
  auto check_run = [&](auto add_hooks, std::int64_t interval, int epochs,
                       std::int64_t first_phase = 0) {
    torch::manual_seed(7);
    Shift g(3);
    LinearD d(3);
    torch::optim::SGD d_opt(d->linear->parameters(), 0.1), g_opt(g->parameters(), 0.1);
    std::vector<torch::Tensor> grads, weights;
    std::vector<bool> scored;
    auto runner = add_hooks(d_opt, g_opt, R1Probe{&grads, &weights, &scored});
    std::vector<epoch_result> results;
    const auto reads = host_reads();
    for (int e = 0; e < epochs; ++e)
      results.push_back(runner.run_epoch(g, d, data, e, d_zero, g_nonsat));
    CHECK(host_reads() == reads);  // the penalty stays on the device
    REQUIRE(grads.size() == static_cast<std::size_t>(3 * epochs));
    for (std::size_t i = 0; i < grads.size(); ++i) {
      CAPTURE(i);
      const bool due = (first_phase + static_cast<std::int64_t>(i)) % interval == 0;
      auto expected = due ? weights[i] * (weight * static_cast<double>(interval))
                          : torch::zeros_like(weights[i]);
      CHECK(torch::allclose(grads[i], expected, 1e-5, 1e-6));
      CHECK(scored[i] == due);
    }
    CHECK(results[0].scores.count("d.r1") == 1);
    return runner;
  };

  SECTION("static, every D phase") {
    check_run(
        [&](auto& d_opt, auto& g_opt, R1Probe probe) {
          return GANTrainingRunner(d_opt, g_opt, gan_options{}, R1GradientPenalty{weight}, probe);
        },
        1, 1);
  }
  SECTION("any_hook, lazy (interval 2): every other D phase, scaled by 2; state counts D phases") {
    auto runner = check_run(
        [&](auto& d_opt, auto& g_opt, R1Probe probe) {
          GANTrainingRunner runner(d_opt, g_opt, gan_options{}, probe, runtime_hooks{});
          runner.hooks().attach(
              any_hook<GANContext>(R1GradientPenalty{{.weight = weight, .interval = 2}}),
              {.strict = true});
          return runner;
        },
        2, 2);
    const auto& state = runner.hooks().runtime().states()[0];
    CHECK(state.key == "R1GradientPenalty");
    CHECK(std::any_cast<state_map>(state.save(state.object)).at("d_phases").toInt() == 6);
  }
  SECTION("a resumed hook continues the interval") {
    R1GradientPenalty saved{{.weight = weight, .interval = 2}};
    saved.load_state_dict(through_pickle(state_map{{"d_phases", std::int64_t{3}}}));
    CHECK(saved.d_phases() == 3);
    check_run(
        [&](auto& d_opt, auto& g_opt, R1Probe probe) {
          return GANTrainingRunner(d_opt, g_opt, gan_options{}, saved, probe);
        },
        2, 1, /*first_phase=*/3);
  }
  SECTION("conditional D: ctx.discriminate passes the discriminator_fields") {
    torch::manual_seed(7);
    Shift g(3);
    ConditionalD d(3);
    torch::optim::SGD d_opt(d->parameters(), 0.1), g_opt(g->parameters(), 0.1);
    std::vector<Entry> cond;
    for (auto& b : data)
      cond.push_back(Entry{
          {"input", b.at("input")}, {"target", b.at("target")}, {"label", torch::ones({4, 1})}});
    GANTrainingRunner runner(d_opt, g_opt, gan_options{.discriminator_fields = {"label"}},
                             R1GradientPenalty{weight});
    runner.run_epoch(g, d, cond, 0, d_zero, g_nonsat);
    CHECK(d->calls == 3 * 4);  // per batch: d_real, d_fake, R1's D(real), d_fake_for_g
    CHECK(d->calls_with_label == d->calls);
  }
}

TEST_CASE("R1GradientPenalty rejects bad parameters", "[hooks]") {
  CHECK(tfx::error_of<std::invalid_argument>([] { R1GradientPenalty{0.0}; }) ==
        "R1GradientPenalty: weight must be a finite number > 0, got 0");
  CHECK_THAT(tfx::error_of<std::invalid_argument>([] { R1GradientPenalty{std::nan("")}; }),
             Catch::StartsWith("R1GradientPenalty: weight must be"));
  CHECK(tfx::error_of<std::invalid_argument>([] { R1GradientPenalty(1.0, 0); }) ==
        "R1GradientPenalty: interval must be >= 1, got 0");
  CHECK(tfx::error_of<std::invalid_argument>([] { R1GradientPenalty{{.name = ""}}; }) ==
        "R1GradientPenalty: name must be non-empty, got \"\"");
}

// ============================================================================ EdgeEnhancedInput

TEST_CASE("sobel_edge_magnitude of a vertical edge, by hand", "[hooks]") {
  // Columns 0 0 1 1 in every row. Replicate padding gives 0 0 | 0 0 1 1 | 1 1 per row, so
  // gx = (1 + 2 + 1) * (right - left) = 4 * (0, 1, 1, 0) per row, and gy = 0.
  auto column = torch::tensor({0.0f, 0.0f, 1.0f, 1.0f});
  auto image = column.expand({4, 4}).reshape({1, 1, 4, 4});
  auto expected_row = torch::tensor({0.0f, 4.0f, 4.0f, 0.0f});
  CHECK(torch::equal(sobel_edge_magnitude(image, 0.0),
                     expected_row.expand({4, 4}).reshape({1, 1, 4, 4})));
  // eps under the root: sqrt(eps) on flat pixels.
  auto with_eps = sobel_edge_magnitude(image, 1e-4);
  CHECK(with_eps[0][0][0][0].item<float>() == Approx(0.01f));
  CHECK(with_eps[0][0][0][1].item<float>() == Approx(std::sqrt(16.0001f)));
  // A horizontal edge gives the transpose; the channel mean is what counts.
  auto rgb =
      torch::stack({3 * image[0][0].t(), torch::zeros({4, 4}), torch::zeros({4, 4})}).unsqueeze(0);
  CHECK(torch::allclose(sobel_edge_magnitude(rgb, 0.0)[0][0], expected_row.expand({4, 4}).t()));
}

namespace {

/// y = a * sum(input): records the input's channel count.
struct ChannelProbeImpl : torch::nn::Module {
  ChannelProbeImpl() : a(register_parameter("a", torch::ones({1}))) {}
  torch::Tensor forward(const Entry& e) {
    channels.push_back(e.at("input").size(1));
    last_input = e.at("input").detach().clone();
    return a * e.at("input").sum({1, 2, 3}).unsqueeze(1);
  }
  torch::Tensor a;
  std::vector<std::int64_t> channels;
  torch::Tensor last_input;
};
TORCH_MODULE(ChannelProbe);

std::vector<Entry> image_data(int batches, int n, int c, int h, int w, int seed = 4) {
  torch::manual_seed(seed);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i)
    data.push_back(Entry{{"input", torch::rand({n, c, h, w})}, {"target", torch::rand({n, 1})}});
  return data;
}

}  // namespace

TEST_CASE("EdgeEnhancedInput appends the edge channel before the forward (static, any_hook, GAN)",
          "[hooks]") {
  auto data = image_data(2, 2, 3, 5, 6);
  auto expect_input = [&](const torch::Tensor& seen) {
    const auto& in = data.back().at("input");
    CHECK(torch::equal(seen.slice(1, 0, 3), in));
    CHECK(torch::allclose(seen.slice(1, 3, 4), sobel_edge_magnitude(in)));
  };
  SECTION("static on the training runner") {
    ChannelProbe model;
    torch::optim::SGD sgd(model->parameters(), 0.0);
    TrainingEpochRunner runner(sgd, {}, EdgeEnhancedInput{});
    const auto reads = host_reads();
    runner.run_epoch(model, data, 0, mse);
    CHECK(host_reads() == reads);
    CHECK(model->channels == std::vector<std::int64_t>{4, 4});
    expect_input(model->last_input);
    CHECK(data[0].at("input").size(1) == 3);  // the loader's batches are not changed
  }
  SECTION("any_hook on the training runner, another field") {
    ChannelProbe model;
    torch::optim::SGD sgd(model->parameters(), 0.0);
    TrainingEpochRunner runner(sgd, {}, runtime_hooks{});
    runner.hooks().attach(
        any_hook<TrainingContext>(EdgeEnhancedInput{{.field = "input", .eps = 1e-6}}),
        {.strict = true});
    runner.run_epoch(model, data, 0, mse);
    CHECK(model->channels == std::vector<std::int64_t>{4, 4});
    expect_input(model->last_input);
  }
  SECTION("the GAN runner's generator sees it") {
    ChannelProbe g;
    Identity d;  // scores the [N, 1] sample itself
    auto w = torch::zeros({1}, torch::requires_grad());
    torch::optim::SGD d_opt({w}, 0.0), g_opt(g->parameters(), 0.0);
    GANTrainingRunner runner(d_opt, g_opt, gan_options{}, EdgeEnhancedInput{});
    auto d_loss = [&](const Entry& e) {
      return (e.at("d_real").mean() + e.at("d_fake").mean()) * w.sum();
    };
    auto g_loss = [](const Entry& e) { return e.at("d_fake_for_g").mean(); };
    runner.run_epoch(g, d, data, 0, d_loss, g_loss);
    CHECK(g->channels == std::vector<std::int64_t>{4, 4});
  }
  SECTION("errors") {
    CHECK(tfx::error_of<std::invalid_argument>([] { EdgeEnhancedInput{{.field = ""}}; }) ==
          "EdgeEnhancedInput: field must be a field name, got \"\"");
    CHECK(tfx::error_of<std::invalid_argument>([] { EdgeEnhancedInput{{.eps = -1}}; }) ==
          "EdgeEnhancedInput: eps must be a finite number >= 0, got -1");
    ChannelProbe model;
    torch::optim::SGD sgd(model->parameters(), 0.0);
    TrainingEpochRunner runner(sgd, {}, EdgeEnhancedInput{});
    std::vector<Entry> ints{
        Entry{{"input", torch::ones({1, 1, 3, 3}, torch::kLong)}, {"target", torch::ones({1, 1})}}};
    CHECK_THAT(tfx::error_of<std::invalid_argument>([&] { runner.run_epoch(model, ints, 0, mse); }),
               Catch::StartsWith(
                   "EdgeEnhancedInput: field 'input': sobel_edge_magnitude: the images must be"));
  }
}

// ============================================================================ BatchImageSaver

namespace {

/// The PNG at `path` read back with libpng: its pixels as uint8 [H, W, channels] and the
/// channel count of its format (1 gray, 3 RGB). Fails the test when libpng cannot read it.
std::pair<torch::Tensor, int> read_png(const std::filesystem::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_file(&image, path.c_str()) != 0);
  const int channels = PNG_IMAGE_SAMPLE_CHANNELS(image.format);
  image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  auto pixels = torch::empty({static_cast<std::int64_t>(image.height),
                              static_cast<std::int64_t>(image.width), channels == 1 ? 1 : 3},
                             torch::kUInt8);
  REQUIRE(png_image_finish_read(&image, nullptr, pixels.data_ptr<std::uint8_t>(), 0, nullptr) != 0);
  return {pixels, channels};
}

/// What the saver should write for sample `i` of `images` ([N, C, H, W]) with range [lo, hi].
torch::Tensor expected_pixels(const torch::Tensor& images, std::int64_t i, double lo = 0,
                              double hi = 1) {
  auto x = torch::nan_to_num(images[i].to(torch::kFloat), lo, hi, lo).clamp(lo, hi);
  return ((x - lo) * (255.0 / (hi - lo))).round().to(torch::kUInt8).permute({1, 2, 0}).contiguous();
}

std::vector<Entry> saver_data(int batches) {
  torch::manual_seed(8);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i)
    data.push_back(
        Entry{{"input", torch::rand({3, 3, 4, 5}) * 1.4 - 0.2},  // some values out of [0, 1]
              {"target", torch::rand({3, 1, 4, 5})}});
  return data;
}

}  // namespace

TEST_CASE("BatchImageSaver writes PNGs a reader opens, with the pixels of the selected batches",
          "[hooks]") {
  temp_dir dir("hookforge_images");
  Identity identity_model;
  auto data = saver_data(4);

  SECTION("static on InferenceRunner: batches, max_images, RGB and gray, one host read per field") {
    InferenceRunner runner({}, BatchImageSaver{{.out_dir = dir.path,
                                                .fields = {"output", "target"},
                                                .batches = {1, 3},
                                                .max_images = 2}});
    const auto reads = host_reads();
    runner.run_epoch(identity_model, data, 5);
    CHECK(host_reads() - reads == 2 * 2);  // 2 fields x 2 selected batches
    CHECK(dir.files() == std::vector<std::string>{"5"});
    std::vector<std::string> names;
    for (const auto& f : std::filesystem::directory_iterator(dir.path / "5"))
      names.push_back(f.path().filename().string());
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"1_0_output.png", "1_0_target.png", "1_1_output.png",
                                            "1_1_target.png", "3_0_output.png", "3_0_target.png",
                                            "3_1_output.png", "3_1_target.png"});
    for (std::int64_t b : {1, 3})
      for (std::int64_t i : {0, 1}) {
        auto [rgb, rgb_channels] = read_png(dir.path / "5" / fmt::format("{}_{}_output.png", b, i));
        CHECK(rgb_channels == 3);
        CHECK(torch::equal(rgb, expected_pixels(data[b].at("input"), i)));
        auto [gray, gray_channels] =
            read_png(dir.path / "5" / fmt::format("{}_{}_target.png", b, i));
        CHECK(gray_channels == 1);
        CHECK(torch::equal(gray, expected_pixels(data[b].at("target"), i)));
      }
    CHECK(runner.hooks().get<0>().images_saved() == 8);
  }
  SECTION("any_hook on ValidationEpochRunner: every, value_range, [N, H, W] fields, NaN and inf") {
    ValidationEpochRunner runner({}, runtime_hooks{});
    runner.hooks().attach(any_hook<InferenceContext>(BatchImageSaver{{.out_dir = dir.path / "val",
                                                                      .fields = {"input", "mask"},
                                                                      .every = 2,
                                                                      .value_range = {-1.0, 1.0}}}),
                          {.strict = true});
    for (auto& b : data) {
      auto mask = torch::linspace(-2, 2, 3 * 4 * 5).reshape({3, 4, 5});
      mask[0][0][0] = NAN;
      mask[0][0][1] = INFINITY;
      mask[0][0][2] = -INFINITY;
      b.set("mask", mask);
    }
    runner.run_epoch(identity_model, data, 0, [](const Entry& e) { return e.at("output").mean(); });
    std::int64_t files = 0;
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir.path / "val"))
      files += f.is_regular_file();
    CHECK(files == 2 * 3 * 2);  // batches 0 and 2, 3 samples, 2 fields
    auto [mask, channels] = read_png(dir.path / "val" / "0" / "2_0_mask.png");
    CHECK(channels == 1);
    CHECK(torch::equal(mask, expected_pixels(data[2].at("mask").unsqueeze(1), 0, -1, 1)));
    CHECK(mask[0][0][0].item<int>() == 0);
    CHECK(mask[0][1][0].item<int>() == 255);
    CHECK(mask[0][2][0].item<int>() == 0);
    auto [input, input_channels] = read_png(dir.path / "val" / "0" / "0_2_input.png");
    CHECK(input_channels == 3);
    CHECK(torch::equal(input, expected_pixels(data[0].at("input"), 2, -1, 1)));
  }
  SECTION(
      "shared by ref from two runners; filters compose; files are replaced, no temp files left") {
    BatchImageSaver saver{{.out_dir = dir.path}};
    InferenceRunner a({}, hookforge::when(hookforge::ref(saver), hookforge::once(2)));
    BenchmarkRunner b({}, hookforge::ref(saver));
    a.run_epoch(identity_model, data, 0);  // event 2 = batch 1 only
    CHECK(saver.images_saved() == 3);
    b.run_epoch(identity_model, data, 0);  // every batch, replacing batch 1's files
    CHECK(saver.images_saved() == 3 + 12);
    std::int64_t files = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir.path / "0")) {
      CHECK(f.path().extension() == ".png");
      ++files;
    }
    CHECK(files == 12);
  }
  SECTION("a field that is not an image batch") {
    InferenceRunner runner({}, BatchImageSaver{{.out_dir = dir.path, .fields = {"target"}}});
    std::vector<Entry> bad{
        Entry{{"input", torch::rand({2, 3, 4, 4})}, {"target", torch::rand({2, 2, 4, 4})}}};
    CHECK_THAT(
        tfx::error_of<std::invalid_argument>([&] { runner.run_epoch(identity_model, bad, 0); }),
        Catch::StartsWith(
            "BatchImageSaver: field 'target' must be images [N, C, H, W] with C = 1 or 3"));
  }
}

TEST_CASE("BatchImageSaver rejects bad parameters at construction", "[hooks]") {
  CHECK(tfx::error_of<std::invalid_argument>([] { BatchImageSaver{{}}; }) ==
        "BatchImageSaver: out_dir must be a directory path, got \"\"");
  CHECK(tfx::error_of<std::invalid_argument>([] {
          BatchImageSaver{{.out_dir = "x", .fields = {}}};
        }) == "BatchImageSaver: fields must name at least one field, got none");
  CHECK(tfx::error_of<std::invalid_argument>([] {
          BatchImageSaver{{.out_dir = "x", .batches = {-1}}};
        }) == "BatchImageSaver: batches must be >= 0, got -1");
  CHECK(tfx::error_of<std::invalid_argument>([] {
          BatchImageSaver{{.out_dir = "x", .every = 0}};
        }) == "BatchImageSaver: every must be >= 1, got 0");
  CHECK_THAT(tfx::error_of<std::invalid_argument>(
                 [] { BatchImageSaver{{.out_dir = "x", .batches = {1}, .every = 2}}; }),
             Catch::StartsWith("BatchImageSaver: batches and every select batches two ways"));
  CHECK(tfx::error_of<std::invalid_argument>([] {
          BatchImageSaver{{.out_dir = "x", .max_images = -1}};
        }) == "BatchImageSaver: max_images must be >= 0 (0: all), got -1");
  CHECK(tfx::error_of<std::invalid_argument>([] {
          BatchImageSaver{{.out_dir = "x", .value_range = {1.0, 1.0}}};
        }) == "BatchImageSaver: value_range must be finite with low < high, got [1, 1]");
}
