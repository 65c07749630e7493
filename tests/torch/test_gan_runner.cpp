#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "file_testing.hpp"

using namespace tfx;
using namespace hookforge;

namespace {

// --- a tiny 1-D GAN: G shifts noise by a learnable b; D is logistic regression on (x, x^2) ----
struct ShiftGeneratorImpl : torch::nn::Module {
  ShiftGeneratorImpl() : shift(register_parameter("shift", torch::zeros({1}))) {}
  torch::Tensor forward(const Entry& e) { return e.at("input") + shift; }
  torch::Tensor shift;
};
TORCH_MODULE(ShiftGenerator);

struct QuadDiscriminatorImpl : torch::nn::Module {
  QuadDiscriminatorImpl() : linear(register_module("linear", torch::nn::Linear(2, 1))) {}
  torch::Tensor forward(const Entry& e) {
    auto x = e.at("input");
    return linear(torch::cat({x, x * x}, 1));
  }
  torch::nn::Linear linear;
};
TORCH_MODULE(QuadDiscriminator);

/// "input": noise N(0, 1); "target": real samples N(real_mean, 1).
std::vector<Entry> gan_data(int batches, int size, double real_mean = 3.0, int seed = 1) {
  torch::manual_seed(seed);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i)
    data.push_back(
        Entry{{"input", torch::randn({size, 1})}, {"target", real_mean + torch::randn({size, 1})}});
  return data;
}

loss_terms d_bce(const Entry& e) {
  const auto& real = e.at("d_real");
  const auto& fake = e.at("d_fake");
  return {{"real", torch::binary_cross_entropy_with_logits(real, torch::ones_like(real))},
          {"fake", torch::binary_cross_entropy_with_logits(fake, torch::zeros_like(fake))}};
}
torch::Tensor g_bce(const Entry& e) {  // non-saturating
  const auto& fake = e.at("d_fake_for_g");
  return torch::binary_cross_entropy_with_logits(fake, torch::ones_like(fake));
}

/// One method per point, each taking GANContext&.
struct GanRecorder {
  std::vector<std::string>* log;
  void epoch_start(GANContext&) { log->push_back("on_epoch_start"); }
  void pre_step(GANContext&) { log->push_back("on_pre_step"); }
  void pre_d_forward(GANContext&) { log->push_back("on_pre_d_forward"); }
  void post_d_forward(GANContext&) { log->push_back("on_post_d_forward"); }
  void post_d_backward(GANContext&) { log->push_back("on_post_d_backward"); }
  void pre_g_forward(GANContext&) { log->push_back("on_pre_g_forward"); }
  void post_g_forward(GANContext&) { log->push_back("on_post_g_forward"); }
  void post_g_backward(GANContext&) { log->push_back("on_post_g_backward"); }
  void post_step(GANContext&) { log->push_back("on_post_step"); }
  void epoch_end(GANContext&) { log->push_back("on_epoch_end"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(epoch_start, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(pre_step, pts::on_pre_step),
                          HOOKFORGE_HOOKS_INTO(pre_d_forward, pts::on_pre_d_forward),
                          HOOKFORGE_HOOKS_INTO(post_d_forward, pts::on_post_d_forward),
                          HOOKFORGE_HOOKS_INTO(post_d_backward, pts::on_post_d_backward),
                          HOOKFORGE_HOOKS_INTO(pre_g_forward, pts::on_pre_g_forward),
                          HOOKFORGE_HOOKS_INTO(post_g_forward, pts::on_post_g_forward),
                          HOOKFORGE_HOOKS_INTO(post_g_backward, pts::on_post_g_backward),
                          HOOKFORGE_HOOKS_INTO(post_step, pts::on_post_step),
                          HOOKFORGE_HOOKS_INTO(epoch_end, pts::on_epoch_end));
};

/// Records (global_step, d_stepped, g_stepped, d_steps, g_steps) at on_post_step.
struct StepProbe {
  std::vector<std::vector<std::int64_t>>* rows;
  void see(GANContext& ctx) {
    rows->push_back({ctx.global_step, ctx.d_stepped, ctx.g_stepped, ctx.d_steps, ctx.g_steps});
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_step));
};

struct VetoD {
  void veto(GANContext& ctx) { ctx.run_d = false; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_pre_step));
};
struct VetoG {
  void veto(GANContext& ctx) { ctx.run_g = false; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_pre_step));
};
/// Vetoes D's step after its backward (the loss is still computed and scored).
struct VetoDStepLate {
  void veto(GANContext& ctx) { ctx.run_d = false; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_post_d_backward));
};

/// Checks what each backward point sees.
struct GradProbe {
  std::vector<torch::Tensor> d_grads_after_d, d_grads_after_g;
  bool g_grads_at_g = false, phases_ok = true, d_frozen_in_g = true;
  void after_d(GANContext& ctx) {
    phases_ok &= ctx.phase == gan_phase::discriminator &&
                 ctx.parameters().size() == ctx.d_parameters().size();
    d_grads_after_d.clear();
    for (auto& p : ctx.d_parameters()) d_grads_after_d.push_back(p.grad().clone());
  }
  void in_g(GANContext& ctx) {
    phases_ok &= ctx.phase == gan_phase::generator;
    for (auto& p : ctx.d_parameters()) d_frozen_in_g &= !p.requires_grad();
  }
  void after_g(GANContext& ctx) {
    phases_ok &= ctx.phase == gan_phase::generator;
    g_grads_at_g = ctx.parameters()[0].grad().defined() &&
                   ctx.parameters()[0].grad().abs().sum().item<double>() > 0;
    d_grads_after_g.clear();
    for (auto& p : ctx.d_parameters()) d_grads_after_g.push_back(p.grad().clone());
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(after_d, pts::on_post_d_backward),
                          HOOKFORGE_HOOKS_INTO(in_g, pts::on_post_g_forward),
                          HOOKFORGE_HOOKS_INTO(after_g, pts::on_post_g_backward));
};

/// Runs D with gradients at the G phase's first and last points, as a diagnostic or a
/// regulariser might, and checks that D's gradients do not move.
struct RunsDInGPhase {
  QuadDiscriminator d;
  int calls = 0;
  bool d_grads_untouched = true;
  static std::vector<torch::Tensor> grads(GANContext& ctx) {
    std::vector<torch::Tensor> out;
    for (auto& p : ctx.d_parameters())
      out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
    return out;
  }
  void run(GANContext& ctx) {
    const auto before = grads(ctx);
    auto x = torch::randn({4, 1}, torch::requires_grad());  // the graph has a leaf either way
    d->forward(Entry{{"input", x}}).sum().backward();
    d_grads_untouched &= same(before, grads(ctx));
    ++calls;
  }
  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(run, pts::on_pre_g_forward, pts::on_post_g_backward));
};

/// Copies the batch's score names at on_post_step.
struct ScoreNames {
  std::vector<std::string>* names;
  void see(GANContext& ctx) {
    names->clear();
    for (auto& [name, value] : ctx.batch_scores) names->push_back(name);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_step));
};

/// Adds 0.1 * b^2 to the G loss.
struct ShiftPenalty {
  void add(GANContext& ctx) {
    ctx.g_extra_losses["penalty"] = 0.1 * ctx.g_parameters()[0].pow(2).sum();
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_post_g_forward));
};

/// Copies the entry's field names at on_post_g_forward.
struct FieldProbe {
  std::vector<std::string>* names;
  bool real_for_g_constant = false;
  void see(GANContext& ctx) {
    *names = ctx.entry.names();
    if (ctx.entry.contains("d_real_for_g"))
      real_for_g_constant = !ctx.entry.at("d_real_for_g").requires_grad();
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_g_forward));
};

/// A generator, a discriminator and their optimisers, seeded.
struct Gan {
  ShiftGenerator g;
  QuadDiscriminator d;
  torch::optim::SGD g_opt, d_opt;
  explicit Gan(double lr = 0.05)
      : g((torch::manual_seed(0), ShiftGenerator())),
        d(),
        g_opt(g->parameters(), lr),
        d_opt(d->parameters(), lr) {}
};

}  // namespace

TEST_CASE("GAN points fire in the documented order", "[gan][order]") {
  std::vector<std::string> log;
  Gan gan;
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, GanRecorder{&log});
  auto data = gan_data(2, 8);
  auto result = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);

  std::vector<std::string> expected{"on_epoch_start"};
  for (int b = 0; b < 2; ++b)
    expected.insert(expected.end(), {"on_pre_step", "on_pre_d_forward", "on_post_d_forward",
                                     "on_post_d_backward", "on_pre_g_forward", "on_post_g_forward",
                                     "on_post_g_backward", "on_post_step"});
  expected.push_back("on_epoch_end");
  CHECK(log == expected);
  CHECK(result.batches == 2);
  CHECK(runner.d_steps() == 2);
  CHECK(runner.g_steps() == 2);
  static_assert(decltype(runner)::runner_name == "GANTrainingRunner");
}

TEST_CASE("step_ratio 2 updates D every batch and G every second batch", "[gan][step_ratio]") {
  std::vector<std::vector<std::int64_t>> rows;
  std::vector<std::string> log;
  Gan gan;
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{.step_ratio = 2}, StepProbe{&rows},
                           GanRecorder{&log});
  auto data = gan_data(3, 8);
  runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  runner.run_epoch(gan.g, gan.d, data, 1, d_bce, g_bce);  // the cadence runs on over epochs

  //                                        global d_stepped g_stepped d_steps g_steps
  std::vector<std::vector<std::int64_t>> expected{{0, 1, 0, 1, 0}, {1, 1, 1, 2, 1},
                                                  {2, 1, 0, 3, 1}, {3, 1, 1, 4, 2},
                                                  {4, 1, 0, 5, 2}, {5, 1, 1, 6, 3}};
  CHECK(rows == expected);
  CHECK(std::count(log.begin(), log.end(), "on_pre_d_forward") == 6);
  CHECK(std::count(log.begin(), log.end(), "on_pre_g_forward") == 3);
  CHECK(std::count(log.begin(), log.end(), "on_post_g_backward") == 3);
  CHECK(runner.d_steps() == 6);
  CHECK(runner.g_steps() == 3);
}

TEST_CASE("vetoing a network's update leaves its parameters bit-identical", "[gan][veto]") {
  auto data = gan_data(3, 8);

  SECTION("run_d = false at on_pre_step") {
    std::vector<std::string> log;
    Gan gan;
    auto d_before = snapshot(*gan.d), g_before = snapshot(*gan.g);
    GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, VetoD{}, GanRecorder{&log});
    auto r = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
    CHECK(same(d_before, snapshot(*gan.d)));
    CHECK_FALSE(same(g_before, snapshot(*gan.g)));
    CHECK(runner.d_steps() == 0);
    CHECK(runner.g_steps() == 3);
    CHECK(std::count(log.begin(), log.end(), "on_pre_d_forward") == 0);
    CHECK(r.scores.count("d_loss") == 0);
    CHECK(r.scores.count("g_loss") == 1);
  }
  SECTION("run_g = false at on_pre_step") {
    std::vector<std::string> log;
    Gan gan;
    auto d_before = snapshot(*gan.d), g_before = snapshot(*gan.g);
    GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, VetoG{}, GanRecorder{&log});
    auto r = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
    CHECK(same(g_before, snapshot(*gan.g)));
    CHECK_FALSE(same(d_before, snapshot(*gan.d)));
    CHECK(runner.d_steps() == 3);
    CHECK(runner.g_steps() == 0);
    CHECK(std::count(log.begin(), log.end(), "on_pre_g_forward") == 0);
    CHECK(r.scores.count("g_loss") == 0);
  }
  SECTION("run_d = false at on_post_d_backward skips the step but keeps the score") {
    Gan gan;
    auto d_before = snapshot(*gan.d);
    GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, VetoDStepLate{});
    auto r = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
    CHECK(same(d_before, snapshot(*gan.d)));
    CHECK(runner.d_steps() == 0);
    CHECK(runner.g_steps() == 3);
    CHECK(r.scores.count("d_loss") == 1);
  }
}

TEST_CASE("each backward point sees its own network's gradients", "[gan][grads]") {
  Gan gan(0.0);  // lr 0: nothing moves, so the grads can be compared
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, GradProbe{});
  auto data = gan_data(1, 16);
  runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  auto& probe = runner.hooks().get<0>();
  CHECK(probe.phases_ok);
  CHECK(probe.d_frozen_in_g);  // D is a fixed judge in the G phase...
  CHECK(probe.g_grads_at_g);
  REQUIRE(probe.d_grads_after_d.size() == probe.d_grads_after_g.size());
  CHECK(
      same(probe.d_grads_after_d, probe.d_grads_after_g));  // ...so G's loss leaves D's grads alone
  for (auto& p : gan.d->parameters()) CHECK(p.requires_grad());  // and its flags come back
}

TEST_CASE("GAN scores: totals, prefixed terms and extra losses", "[gan][scores]") {
  Gan gan;
  std::vector<std::string> fields;
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{.step_ratio = 2, .d_real_for_g = true},
                           ShiftPenalty{}, FieldProbe{&fields});
  auto data = gan_data(4, 8);
  auto r = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  std::vector<std::string> keys;
  for (auto& [name, value] : r.scores) keys.push_back(name);
  // g_bce returns one tensor: its value is part of g_loss and has no name of its own.
  const std::vector<std::string> expected_keys{"d.fake", "d.real", "d_loss", "g.penalty", "g_loss"};
  CHECK(keys == expected_keys);
  CHECK(r.scores.at("d_loss") == Approx(r.scores.at("d.fake") + r.scores.at("d.real")));
  CHECK(r.scores.at("g.penalty") > 0);
  CHECK(r.scores.at("g_loss") > r.scores.at("g.penalty"));  // plus the (positive) BCE
  const std::vector<std::string> expected_fields{
      "input", "target", "output", "fake", "d_real", "d_fake", "d_fake_for_g", "d_real_for_g"};
  CHECK(fields == expected_fields);
  CHECK(runner.hooks().get<1>().real_for_g_constant);
}

TEST_CASE("a tensor criterion's value is scored once as <network>_loss", "[gan][scores]") {
  Gan gan;
  std::vector<std::string> batch_names;
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, ScoreNames{&batch_names});
  auto data = gan_data(2, 8);
  auto tensor_d = [](const Entry& e) { return total_loss(d_bce(e)); };
  auto r = runner.run_epoch(gan.g, gan.d, data, 0, tensor_d, g_bce);
  const std::vector<std::string> expected{"d_loss", "g_loss"};
  CHECK(batch_names == expected);
  std::vector<std::string> keys;
  for (auto& [name, value] : r.scores) keys.push_back(name);
  CHECK(keys == expected);
}

TEST_CASE("a hook running D in the G phase leaves D's gradients alone", "[gan][grads]") {
  Gan gan(0.0);
  QuadDiscriminator same_d = gan.d;  // the holder shares the module
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{}, RunsDInGPhase{same_d});
  auto data = gan_data(2, 8);
  runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  const auto& hook = runner.hooks().get<0>();
  CHECK(hook.calls == 4);  // on_pre_g_forward and on_post_g_backward, two batches
  CHECK(hook.d_grads_untouched);
  for (auto& p : gan.d->parameters()) CHECK(p.requires_grad());  // unfrozen after the phase
}

TEST_CASE("a 1-D GAN moves the fake distribution to the real mean", "[gan][learn]") {
  Gan gan(0.05);
  auto data = gan_data(8, 64, 3.0, 7);
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{});
  auto fake_mean = [&] { return gan.g->shift.item<double>(); };  // mean(noise + b) = b
  const double start = std::abs(fake_mean() - 3.0);
  for (int epoch = 0; epoch < 40; ++epoch)
    runner.run_epoch(gan.g, gan.d, data, epoch, d_bce, g_bce);
  const double end = std::abs(fake_mean() - 3.0);
  INFO("start " << start << ", end " << end);
  CHECK(start == Approx(3.0));
  CHECK(end < 0.5);
  CHECK(runner.g_steps() == 8 * 40);
}

TEST_CASE("GAN runner counters and scalers round-trip through state_dict", "[gan][state]") {
  Gan gan;
  auto data = gan_data(3, 8);
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{.step_ratio = 2});
  runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  auto state = runner.state_dict();
  CHECK(state.at("global_step").toInt() == 3);
  CHECK(state.at("d_steps").toInt() == 3);
  CHECK(state.at("g_steps").toInt() == 1);

  std::vector<std::vector<std::int64_t>> rows;
  GANTrainingRunner resumed(gan.d_opt, gan.g_opt, gan_options{.step_ratio = 2}, StepProbe{&rows});
  resumed.load_state_dict(state);
  resumed.run_epoch(gan.g, gan.d, data, 1, d_bce, g_bce);
  std::vector<std::vector<std::int64_t>> expected{
      {3, 1, 1, 4, 2}, {4, 1, 0, 5, 2}, {5, 1, 1, 6, 3}};
  CHECK(rows == expected);
}

TEST_CASE("a GAN runner needs both optimisers", "[gan][construct]") {
  Gan gan;
  using Catch::Matchers::Contains;
  torch::optim::Optimizer* none = nullptr;
  CHECK_THROWS_AS(GANTrainingRunner(&gan.d_opt, none, gan_options{}), std::invalid_argument);
  CHECK_THROWS_WITH(GANTrainingRunner(&gan.d_opt, none, gan_options{}),
                    Contains("generator optimizer (g_optimizer) is missing"));
  CHECK_THROWS_WITH(GANTrainingRunner(nullptr, &gan.g_opt, gan_options{}),
                    Contains("discriminator optimizer (d_optimizer) is missing"));
  CHECK_THROWS_WITH(GANTrainingRunner(none, none, gan_options{}),
                    Contains("d_optimizer) and the generator optimizer (g_optimizer) are missing"));
  CHECK_THROWS_WITH(GANTrainingRunner(gan.d_opt, gan.d_opt, gan_options{}),
                    Contains("same object"));
  CHECK_THROWS_WITH(GANTrainingRunner(gan.d_opt, gan.g_opt, gan_options{.step_ratio = 0}),
                    Contains("step_ratio must be >= 1"));
  CHECK_NOTHROW(GANTrainingRunner(&gan.d_opt, &gan.g_opt, gan_options{}));
}

TEST_CASE("mixed precision on CPU: bf16 autocast, both scalers disabled", "[gan][amp]") {
  Gan gan;
  auto data = gan_data(2, 8);
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{.mixed_precision = true});
  CHECK_FALSE(runner.d_scaler().is_enabled());
  CHECK_FALSE(runner.g_scaler().is_enabled());
  auto r = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  CHECK(std::isfinite(r.scores.at("d_loss")));
  CHECK(std::isfinite(r.scores.at("g_loss")));
  CHECK(runner.g_steps() == 2);
  CHECK(runner.state_dict().count("d_scaler.scale") == 0);  // a disabled scaler saves nothing
}

// --- the GAN runner through the Trainer ---------------------------------------------------------

namespace {

/// A stateful GAN hook: counts G's updates.
struct GStepCount {
  std::int64_t steps = 0;
  void count(GANContext& ctx) { steps += ctx.g_stepped; }
  hookforge::state_map state_dict() const { return {{"steps", steps}}; }
  void load_state_dict(const hookforge::state_map& s) { steps = s.at("steps").toInt(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

/// Saves the trainer's checkpoint from its context when `after_epochs` epochs are complete.
struct SaveAt {
  std::int64_t after_epochs = -1;
  std::filesystem::path path;
  std::vector<std::vector<double>>* lrs = nullptr;
  void save(TrainerContext& ctx) {
    if (lrs) lrs->push_back(ctx.learning_rates);
    if (ctx.completed_epochs == after_epochs) ctx.save_checkpoint(path);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(save, pts::on_trainer_epoch_finished));
};

/// The generator's validation: how far the fake mean is from the real one.
torch::Tensor mean_gap(const Entry& e) {
  return torch::l1_loss(e.at("output").mean(), e.at("target").mean());
}

using GanTrainerRunner = GANTrainingRunner<GStepCount>;
using GanModels = gan_models<ShiftGenerator, QuadDiscriminator>;

struct GanTrainerRun {
  ShiftGenerator g;
  QuadDiscriminator d;
  torch::optim::Adam d_opt, g_opt;
  StepLR scheduler;
  GanModels models{g, d};
  GanTrainerRunner runner;
  ValidationEpochRunner<> val;
  Trainer<GanModels, GanTrainerRunner, ValidationEpochRunner<>, SaveAt> trainer;
  GanTrainerRun(std::int64_t epochs, int seed, SaveAt save = {})
      : g(),
        d((torch::manual_seed(seed), QuadDiscriminator())),
        d_opt(d->parameters(), torch::optim::AdamOptions(0.01)),
        g_opt(g->parameters(), torch::optim::AdamOptions(0.05)),
        scheduler(g_opt, 1, 0.9),  // G's learning rate decays per epoch
        runner(d_opt, g_opt, gan_options{.step_ratio = 2}, GStepCount{}),
        val(inference_options{}),
        trainer(models, runner, val, trainer_options{.epochs = epochs, .scheduler = &scheduler},
                std::move(save)) {}
};

void check_identical(GanTrainerRun& a, GanTrainerRun& b) {
  CHECK(same(snapshot(*a.g), snapshot(*b.g)));
  CHECK(same(snapshot(*a.d), snapshot(*b.d)));
  CHECK(same_adam_state(a.d_opt, b.d_opt));
  CHECK(same_adam_state(a.g_opt, b.g_opt));
  CHECK(a.runner.global_step() == b.runner.global_step());
  CHECK(a.runner.d_steps() == b.runner.d_steps());
  CHECK(a.runner.g_steps() == b.runner.g_steps());
  CHECK(a.runner.d_scaler().state_dict().size() == b.runner.d_scaler().state_dict().size());
  CHECK(a.runner.g_scaler().state_dict().size() == b.runner.g_scaler().state_dict().size());
  CHECK(a.runner.hooks().get<0>().steps == b.runner.hooks().get<0>().steps);
  CHECK(a.scheduler.last_lr() == b.scheduler.last_lr());
  CHECK(a.trainer.completed_epochs() == b.trainer.completed_epochs());
}

}  // namespace

TEST_CASE("the GAN runner trains through the Trainer and resumes exactly",
          "[gan][trainer][resume]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-gan-resume.ckpt";
  std::filesystem::remove(path);
  ShuffledLoader train_data{gan_data(3, 8, 3.0, 31),
                            {}};  // 3 batches, step_ratio 2: G's cadence crosses epochs
  auto val_data = gan_data(1, 32, 3.0, 32);
  const gan_criteria criteria{d_bce, g_bce};

  std::vector<std::vector<double>> lrs;
  torch::manual_seed(100);
  GanTrainerRun straight(4, 5, SaveAt{2, path, &lrs});
  torch::manual_seed(100);
  auto result = straight.trainer.fit(train_data, val_data, criteria, mean_gap);
  CHECK(result.completed_epochs == 4);
  CHECK(result.train_scores.count("d_loss") == 1);
  CHECK(result.val_scores.count("loss") == 1);  // the generator, validated with mean_gap
  CHECK(straight.runner.global_step() == 12);
  CHECK(straight.runner.g_steps() == 6);
  CHECK(straight.runner.hooks().get<0>().steps == 6);
  // learning_rates: D's group, then G's (decayed by the scheduler).
  REQUIRE(lrs.size() == 4);
  CHECK(lrs[0] == std::vector<double>{0.01, 0.05});
  CHECK(lrs[1][0] == 0.01);
  CHECK(lrs[1][1] == Approx(0.05 * 0.9).epsilon(1e-12));
  REQUIRE(std::filesystem::exists(path));
  {
    checkpoint_reader in(path);
    for (const char* section :
         {"generator", "discriminator", "d_optimizer", "g_optimizer", "training_runner"})
      CHECK(in.contains(section));
    CHECK_FALSE(in.contains("model"));
    CHECK_FALSE(in.contains("optimizer"));
  }

  GanTrainerRun resumed(4, 99);  // another D: everything must come from the checkpoint
  resumed.trainer.load_checkpoint(path);
  CHECK(resumed.trainer.completed_epochs() == 2);
  CHECK(resumed.runner.g_steps() == 3);
  auto resumed_result = resumed.trainer.fit(train_data, val_data, criteria, mean_gap);
  CHECK(resumed_result.completed_epochs == 4);
  check_identical(straight, resumed);
  CHECK(resumed_result.val_scores.at("loss") == result.val_scores.at("loss"));  // bit-identical
  CHECK(resumed_result.train_scores.at("g_loss") == result.train_scores.at("g_loss"));

  // The same through save_checkpoint between fit() calls: 2 + save + load into fresh objects + 2.
  torch::manual_seed(100);
  GanTrainerRun first(2, 5);
  torch::manual_seed(100);
  first.trainer.fit(train_data, val_data, criteria, mean_gap);
  first.trainer.save_checkpoint(path);
  GanTrainerRun again(4, 77);
  again.trainer.load_checkpoint(path);
  again.trainer.fit(train_data, val_data, criteria, mean_gap);
  check_identical(straight, again);
  std::filesystem::remove(path);
}

TEST_CASE("a GAN checkpoint without the optimisers keeps both as they are",
          "[gan][trainer][checkpoint]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-gan-no-opt.ckpt";
  auto data = gan_data(2, 8);
  GanTrainerRun run(1, 5);
  run.trainer.fit(data, data, gan_criteria{d_bce, g_bce}, mean_gap);
  run.trainer.save_checkpoint(path, {.optimizer = false});
  {
    checkpoint_reader in(path);
    CHECK_FALSE(in.contains("d_optimizer"));
    CHECK_FALSE(in.contains("g_optimizer"));
  }
  GanTrainerRun fresh(1, 6);
  CHECK_NOTHROW(fresh.trainer.load_checkpoint(path));
  CHECK(same(snapshot(*run.d), snapshot(*fresh.d)));
  CHECK(fresh.d_opt.state().empty());
  std::filesystem::remove(path);
}

namespace {
/// R1 at on_post_d_forward: weight/2 * E|grad_x D(x_real)|^2, added to D's loss. Also checks
/// that it runs under autocast (a float mm gives bf16).
struct R1Penalty {
  QuadDiscriminator d;
  double weight;
  bool autocast_seen = false;
  void add(GANContext& ctx) {
    autocast_seen =
        torch::mm(torch::ones({2, 2}), torch::ones({2, 2})).scalar_type() == torch::kBFloat16;
    ctx.d_extra_losses["r1"] = penalty(d, ctx.entry.at("target"), weight);
  }
  static torch::Tensor penalty(QuadDiscriminator& d, const torch::Tensor& target, double weight) {
    auto real = target.detach().requires_grad_(true);
    auto score = d->forward(Entry{{"input", real}});
    auto grad = torch::autograd::grad({score.sum()}, {real}, {}, /*retain_graph=*/true,
                                      /*create_graph=*/true)[0];
    return 0.5 * weight * grad.pow(2).sum(1).mean();
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_post_d_forward));
};

/// D's gradients at the first on_post_d_backward.
struct DGradCopy {
  std::vector<torch::Tensor> grads;
  void copy(GANContext& ctx) {
    if (!grads.empty()) return;
    for (auto& p : ctx.d_parameters()) grads.push_back(p.grad().clone());
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(copy, pts::on_post_d_backward));
};
}  // namespace

TEST_CASE("an R1 penalty added at on_post_d_forward trains under mixed precision", "[gan][amp]") {
  Gan gan(0.0);  // lr 0: the gradients are compared on fixed weights
  auto data = gan_data(2, 8);
  GANTrainingRunner runner(gan.d_opt, gan.g_opt, gan_options{.mixed_precision = true},
                           R1Penalty{gan.d, 10.0}, DGradCopy{});
  auto r = runner.run_epoch(gan.g, gan.d, data, 0, d_bce, g_bce);
  CHECK(runner.hooks().get<0>().autocast_seen);
  CHECK(std::isfinite(r.scores.at("d.r1")));
  CHECK(r.scores.at("d.r1") > 0);
  const auto& grads = runner.hooks().get<1>().grads;

  // D's loss and the penalty by hand, in one autocast region, on the first batch.
  std::vector<torch::Tensor> expected;
  {
    gan.d->zero_grad();
    torch::Tensor loss;
    {
      autocast_guard autocast(torch::kCPU, true);
      Entry e = data[0];
      auto fake = gan.g->forward(e).detach();
      e.set("d_real", gan.d->forward(Entry{{"input", e.at("target")}}));
      e.set("d_fake", gan.d->forward(Entry{{"input", fake}}));
      loss = total_loss(d_bce(e)) + R1Penalty::penalty(gan.d, e.at("target"), 10.0);
    }
    loss.backward();
    for (auto& p : gan.d->parameters()) expected.push_back(p.grad().clone());
  }
  REQUIRE(grads.size() == expected.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    INFO("parameter " << i << ": " << grads[i] << " vs " << expected[i]);
    CHECK(torch::allclose(grads[i], expected[i], /*rtol=*/2e-2, /*atol=*/1e-4));
  }
}
