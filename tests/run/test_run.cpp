// Config-driven runs in process: the run layer's kinds and components built from YAML,
// trained, and inspected. ${ref} sharing, bindings remaps and null, priorities of static
// and runtime hooks in one runner, warnings and strict mode, context errors, and the
// embedded default config. The command line (exit codes, files, kill and resume) is
// tested by cli.py.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "hookforge/run.hpp"  // torch before Catch: glog defines CHECK too
#include "hookforge/torch/data/procedural_images.hpp"

#include <catch2/catch.hpp>

#include "../torch/file_testing.hpp"
#include "../torch/skip.hpp"
#include "run_fixture.hpp"

namespace cfg = hookforge::config;
namespace run = hookforge::run;
namespace pts = hookforge::points;
using run_tests::build;
using run_tests::error_of;

namespace {

/// Counts the steps of every runner it is attached to.
struct StepCounter {
  std::int64_t count = 0;
  void count_step(auto&) { ++count; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count_step, pts::on_post_step));
};

std::vector<std::string>& order_log() {
  static std::vector<std::string> log;
  return log;
}

/// Notes its label at on_post_step (runtime, from the config).
struct OrderProbe {
  std::string label;
  explicit OrderProbe(std::string l) : label(std::move(l)) {}
  void note(auto&) { order_log().push_back(label); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(note, pts::on_post_step));
};

/// A static hook of the runner, priority 40 (ABOVE_NORMAL).
struct StaticProbe {
  static constexpr int priority = 40;
  void note(hookforge::TrainingContext&) { order_log().push_back("static"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(note, pts::on_post_step));
};

/// Reads a field only training contexts have: under the validation runner, an error.
struct NeedsOptimizer {
  template <class C>
    requires requires(C& c) { c.optimizer_steps; }
  void look(C&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
};

}  // namespace

HOOKFORGE_REGISTER(runner_hook, StepCounter);
HOOKFORGE_REGISTER(runner_hook, OrderProbe, cfg::arg<std::string>("label"));
HOOKFORGE_REGISTER(hook, NeedsOptimizer);

// A training runner with a static hook next to the config's runtime ones.
HOOKFORGE_REGISTER_AS(training_runner, "StaticProbeRunner",
                      run::epoch_training_component<StaticProbe>,
                      cfg::factory([](run::training_config c) {
                        return std::make_shared<run::epoch_training_component<StaticProbe>>(
                            std::move(c), StaticProbe{});
                      }),
                      cfg::options<run::training_config>(
                          cfg::field("optimizer", &run::training_config::optimizer, cfg::required),
                          cfg::field("hooks", &run::training_config::hooks)));

TEST_CASE("a hook referenced from both runners is one object that counts both", "[run][ref]") {
  auto r = build(
      {"hooks.train_only={_target: StepCounter}", "hooks.val_only={_target: StepCounter}",
       "training_runner.params.hooks=[\"${ref:hooks.counter}\", \"${ref:hooks.train_only}\"]",
       "validation_runner.params.hooks=[\"${ref:hooks.counter}\", \"${ref:hooks.val_only}\"]"});
  r.trainer->fit();
  CHECK(r.hook<StepCounter>("hooks.train_only")->count == 8);  // 2 epochs x 4 batches
  CHECK(r.hook<StepCounter>("hooks.val_only")->count == 4);    // 2 epochs x 2 batches
  CHECK(r.hook<StepCounter>("hooks.counter")->count == 12);    // both runners, one object
  CHECK(r.hook<StepCounter>("hooks.counter") == r.hook<StepCounter>("hooks.counter"));
}

TEST_CASE("bindings remap a handler to other points, or disable it with null", "[run][bindings]") {
  auto r = build(
      {"hooks.epochs={_target: StepCounter, bindings: {count_step: on_epoch_end}}",
       "hooks.both={_target: StepCounter, bindings: {count_step: [on_epoch_start, on_epoch_end]}}",
       "hooks.off={_target: StepCounter, bindings: {count_step: null}}",
       "training_runner.params.hooks=[\"${ref:hooks.epochs}\", \"${ref:hooks.both}\", "
       "\"${ref:hooks.off}\", \"${ref:hooks.counter}\"]"});
  const auto table = r.trainer->format_bindings();
  r.trainer->fit();
  CHECK(r.hook<StepCounter>("hooks.epochs")->count == 2);
  CHECK(r.hook<StepCounter>("hooks.both")->count == 4);
  CHECK(r.hook<StepCounter>("hooks.off")->count == 0);
  CHECK(r.hook<StepCounter>("hooks.counter")->count == 8);
  // The disabled handler is in no row; the others are where the config put them.
  auto count_of = [&](std::string_view what) {
    std::size_t n = 0;
    for (auto at = table.find(what); at != std::string::npos; at = table.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count_of("StepCounter::count_step") == 4);  // epochs at 1 point, both at 2, counter at 1
}

TEST_CASE("static and runtime hooks of one runner fire in priority order", "[run][priority]") {
  auto r = build(
      {"training_runner._target=StaticProbeRunner",
       "training_runner.params.hooks=[{_target: OrderProbe, params: {label: low}, priority: LOW}, "
       "{_target: OrderProbe, params: {label: normal}}, "
       "{_target: OrderProbe, params: {label: high}, priority: HIGH}, "
       "{_target: OrderProbe, params: {label: '41'}, priority: 41}]"});
  order_log().clear();
  r.trainer->fit();
  REQUIRE(order_log().size() == 8 * 5);
  const std::vector<std::string> step(order_log().begin(), order_log().begin() + 5);
  CHECK((step == std::vector<std::string>{"high", "static", "41", "normal", "low"}));
  const auto table = r.trainer->format_bindings();
  const auto at_static = table.find("StaticProbe::note");
  REQUIRE(at_static != std::string::npos);
  CHECK(table.find("OrderProbe::note   [runtime]") < at_static);  // high, above the static one
  CHECK(table.find("StaticProbe::note   [runtime]") == std::string::npos);
}

TEST_CASE("a hook that binds to no point of its component warns, and is an error when strict",
          "[run][strict]") {
  const std::vector<std::string> sets{
      "validation_runner.params.hooks=[{_target: StepCounter, bindings: {count_step: "
      "on_pre_step}}]"};
  {
    hookforge::capture_warnings warnings;
    build(sets);
    REQUIRE(warnings.messages.size() == 1);
    CHECK(warnings.messages[0].starts_with(
        "<--set validation_runner.params.hooks=[{_target: StepCounter"));
    CHECK(warnings.messages[0].find("validation_runner.params.hooks[0]") != std::string::npos);
    CHECK(warnings.messages[0].find("ValidationEpochRunner exposes no matching HookPoint") !=
          std::string::npos);
  }
  const auto strict = error_of(sets, /*strict=*/true);
  CHECK(strict.find("validation_runner.params.hooks[0]: expected a hook that binds to points of "
                    "ValidationEpochRunner") != std::string::npos);
}

TEST_CASE("a hook whose handler cannot take the component's context is a config error",
          "[run][context]") {
  const auto message = error_of({"validation_runner.params.hooks=[{_target: NeedsOptimizer}]"});
  CHECK(message.find("validation_runner.params.hooks[0]: expected a hook whose handlers "
                     "ValidationEpochRunner can "
                     "call, got handler NeedsOptimizer::look cannot be called") !=
        std::string::npos);
  // A built-in registered for other contexts only: its handlers cannot fire there, SR-Forge's
  // wrong-target warning (it is left out); strict, an error naming the contexts it has.
  {
    hookforge::capture_warnings warnings;
    build({"validation_runner.params.hooks=[{_target: CheckpointSaver}]"});
    REQUIRE(warnings.messages.size() == 1);
    CHECK(warnings.messages[0].find("Hook CheckpointSaver is registered for TrainerContext") !=
          std::string::npos);
    CHECK(warnings.messages[0].find(
              "but ValidationEpochRunner runs with InferenceContext: none of its handlers can "
              "fire there") != std::string::npos);
  }
  const auto saver =
      error_of({"validation_runner.params.hooks=[{_target: CheckpointSaver}]"}, /*strict=*/true);
  CHECK(saver.find("expected a hook registered for the context of ValidationEpochRunner") !=
        std::string::npos);
  CHECK(saver.find("registered for TrainerContext") != std::string::npos);
}

namespace {

/// Trains `full` (4 epochs) straight, and `half` (2 epochs) + a checkpoint + `full` resumed
/// from it: the scores must be equal.
void check_exact_resume(const std::vector<std::string>& full, const std::vector<std::string>& half,
                        const std::string& name) {
  tfx::temp_dir scratch("hookforge-run-tests-" + name);
  const auto& dir = scratch.path;
  const auto expected = build(full).trainer->fit();
  auto first = build(half);
  first.trainer->fit();
  first.trainer->save_checkpoint(dir / "half.pt");
  auto second = build(full);
  second.trainer->load_checkpoint(dir / "half.pt");
  const auto resumed = second.trainer->fit();
  CHECK(resumed.completed_epochs == 4);
  CHECK(resumed.val_scores == expected.val_scores);
  CHECK(resumed.train_scores == expected.train_scores);
}

}  // namespace

TEST_CASE("the trainer resumes a configured run exactly", "[run][resume]") {
  check_exact_resume({"trainer.params.epochs=4", "training_runner.params.hooks=[]"},
                     {"trainer.params.epochs=2"}, "resume");
}

TEST_CASE("a configured scheduler steps per update, composed of entries, and resumes exactly",
          "[run][resume][sched]") {
  // A warm-up over 3 updates, then a decay per update; 4 updates an epoch.
  const std::string scheduler =
      "trainer.params.scheduler={_target: SequentialLR, params: {optimizer: '${ref:optimizer}', "
      "interval: step, milestones: [3], schedulers: ["
      "{_target: LinearLR, params: {optimizer: '${ref:optimizer}', start_factor: 0.5, "
      "total_iters: 3}}, "
      "{_target: ExponentialLR, params: {optimizer: '${ref:optimizer}', gamma: 0.9}}]}}";
  const auto result = build({scheduler}).trainer->fit();
  REQUIRE(result.history.size() == 2);
  CHECK(result.history[0].learning_rates.at(0) == Approx(0.01 * 0.5));
  CHECK(result.history[1].learning_rates.at(0) == Approx(0.01 * 0.9));  // 4 updates: 3 + 1
  check_exact_resume({"trainer.params.epochs=4", scheduler}, {"trainer.params.epochs=2", scheduler},
                     "per-update");

  const auto plateau =
      error_of({"trainer.params.scheduler={_target: ReduceLROnPlateau, params: {optimizer: "
                "'${ref:optimizer}', interval: step}}"});
  CHECK(plateau.find("trainer.params.scheduler") != std::string::npos);
  CHECK(plateau.find("steps per epoch, not per update") != std::string::npos);

  // A cycle shorter than the run is found as the run is built, not when it runs out.
  const auto short_cycle =
      error_of({"trainer.params.scheduler={_target: OneCycleLR, params: {optimizer: "
                "'${ref:optimizer}', max_lr: 0.1, total_steps: 7}}"});
  CHECK(short_cycle.find("the scheduler ends after 7 steps, but the run steps it 8 times (2 "
                         "epochs x 4 updates): give it total_steps 8") != std::string::npos);
}

TEST_CASE("the embedded default config is configs/default.yaml, byte for byte", "[run][default]") {
  std::ifstream in(std::string(HOOKFORGE_SOURCE_DIR) + "/configs/default.yaml", std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  CHECK(run::default_config() == file.str());
}

TEST_CASE("every built-in is registered under its kind", "[run][registry]") {
  run::link_registrations();
  std::map<std::string, std::vector<std::string>> names;
  for (const auto* reg : cfg::registries())
    for (const auto& e : reg->list()) names[std::string(reg->kind())].push_back(e.name);
  auto has = [&](const std::string& kind, std::initializer_list<std::string> expected) {
    for (const auto& n : expected) {
      INFO(kind << " " << n);
      CHECK(std::find(names[kind].begin(), names[kind].end(), n) != names[kind].end());
    }
  };
  has("hook", {"BatchImageSaver", "CheckInvalidLoss", "CheckpointSaver", "DWarmup", "EarlyStopping",
               "EdgeEnhancedInput", "EMA", "EmptyCache", "GradientClip", "HookProfiler",
               "IterTimer", "LossLogger", "LRWarmup", "MetricsPlot", "ModelSummary", "ProgressBar",
               "R1GradientPenalty", "StepRatio"});
  has("model", {"ESPCN", "MLP", "PatchDiscriminator", "Pretrained"});
  has("dataset", {"ImageFolder", "ProceduralImages", "Sine"});
  has("optimizer", {"SGD", "Adam", "AdamW", "RMSprop"});
  has("scheduler", {"ChainedScheduler", "ConstantLR", "CosineAnnealingLR",
                    "CosineAnnealingWarmRestarts", "ExponentialLR", "LinearLR", "MultiStepLR",
                    "OneCycleLR", "PolynomialLR", "SequentialLR", "StepLR", "ReduceLROnPlateau"});
  has("stop_condition", {"ValidationLossDidNotImprove", "NoCondition"});
  has("loss",
      {"L1", "MSE", "Charbonnier", "WeightedSum", "GANDiscriminatorLoss", "GANGeneratorLoss"});
  has("metric", {"PSNR", "SSIM", "MAE", "MSE", "Accuracy"});
  has("training_runner", {"TrainingEpochRunner", "GANTrainingRunner"});
  has("validation_runner", {"ValidationEpochRunner"});
  has("trainer", {"Trainer"});
  has("loader", {"DataLoader"});
}

TEST_CASE("`fused: true` builds FusedAdam, or is a located error where LibTorch has no kernel",
          "[run][optimizer]") {
  const bool has_kernel = hookforge::compat::has_kernel("aten::_fused_adam_", torch::kCPU);
  for (const std::string target : {"Adam", "AdamW"}) {
    INFO(target);
    const std::vector<std::string> sets = {"optimizer._target=" + target,
                                           "optimizer.params.fused=true"};
    if (has_kernel) {
      auto r = build(sets);
      auto optimizer = r.b->get<std::shared_ptr<torch::optim::Optimizer>>("optimizer");
      CHECK(dynamic_cast<hookforge::supports_amp_scaling*>(optimizer.get()) != nullptr);
      CHECK((target == "Adam" ? dynamic_cast<hookforge::FusedAdam*>(optimizer.get()) != nullptr
                              : dynamic_cast<hookforge::FusedAdamW*>(optimizer.get()) != nullptr));
      CHECK(r.trainer->fit().completed_epochs == 2);
    } else {
      const auto message = error_of(sets);
      CHECK_THAT(message, Catch::Contains("optimizer") && Catch::Contains("fused: this LibTorch") &&
                              Catch::Contains("no fused Adam kernel for cpu"));
    }
  }
  auto plain = build({"optimizer._target=Adam"});
  CHECK(dynamic_cast<torch::optim::Adam*>(
      plain.b->get<std::shared_ptr<torch::optim::Optimizer>>("optimizer").get()));
}

TEST_CASE("a run with a fused AdamW resumes exactly", "[run][resume][optimizer]") {
  if (!hookforge::compat::has_kernel("aten::_fused_adam_", torch::kCPU))
    HOOKFORGE_SKIP("LibTorch " TORCH_VERSION " has no CPU kernel of _fused_adam_ (CPU from 2.4)");
  const std::vector<std::string> fused{"optimizer._target=AdamW", "optimizer.params.fused=true",
                                       "optimizer.params.lr=0.01"};
  auto with = [&](std::string epochs) {
    auto sets = fused;
    sets.push_back("trainer.params.epochs=" + epochs);
    return sets;
  };
  check_exact_resume(with("4"), with("2"), "fused-resume");
}

TEST_CASE("a Pretrained model starts from a run's checkpoint, its frozen parameters stay",
          "[run][pretrained]") {
  tfx::temp_dir scratch("hookforge-run-tests-pretrained");
  auto first = build({});
  first.trainer->fit();
  first.trainer->save_checkpoint(scratch.path / "first.pt");
  const auto trained =
      first.b->get<std::shared_ptr<run::Model>>("model")->module().named_parameters();

  const std::string model =
      "model={_target: Pretrained, params: {model: {_target: MLP, params: {hidden: [8]}}, file: '" +
      (scratch.path / "first.pt").string() + "', freeze: ['body.0.*']}}";
  auto second = build({model});
  auto& net = second.b->get<std::shared_ptr<run::Model>>("model")->module();
  for (const auto& p : net.named_parameters()) {
    INFO(p.key());
    CHECK(torch::equal(p.value(), trained[p.key()]));
    CHECK(p.value().requires_grad() == !p.key().starts_with("body.0."));
  }
  const auto optimizer = second.b->get<std::shared_ptr<torch::optim::Optimizer>>("optimizer");
  CHECK(optimizer->param_groups()[0].params().size() == net.parameters().size() - 2);
  second.trainer->fit();
  for (const auto& p : net.named_parameters()) {
    INFO(p.key());
    CHECK(torch::equal(p.value(), trained[p.key()]) == p.key().starts_with("body.0."));
  }

  CHECK_THAT(
      error_of({"model={_target: Pretrained, params: {model: {_target: MLP, params: {hidden: "
                "[4]}}, file: '" +
                (scratch.path / "first.pt").string() + "'}}"}),
      Catch::Contains("model.params: expected parameters that Pretrained accepts, got "
                      "\"load_pretrained: '"));
  CHECK_THAT(
      error_of({"model={_target: Pretrained, params: {model: {_target: MLP}, freeze: ['*']}}"}),
      Catch::Contains("every parameter of the model is frozen; nothing to train"));
}

TEST_CASE("a configured dataset's loader gathers whole batches where the class serves them",
          "[run][data]") {
  // ProceduralImages (cached) serves get_batch through run::dataset_of and any_dataset: the
  // batches a config's loader yields are those of the samples stacked one by one.
  const auto images = std::make_shared<const run::dataset_of<hookforge::ProceduralImages>>(
      hookforge::procedural_images_options{
          .count = 9, .size = 8, .scale = 2, .seed = 5, .cache = true});
  const run::any_dataset data(images);
  static_assert(hookforge::epoch_batch_dataset<run::any_dataset>);
  const std::vector<std::size_t> indices{8, 0, 3, 3};
  const hookforge::Entry gathered = data.get_batch(indices, 2);
  std::vector<hookforge::Entry> samples;
  for (std::size_t i : indices) samples.push_back(data.get(i, 2));
  const hookforge::Entry stacked = hookforge::detail::collate(samples, indices);
  REQUIRE(gathered.names() == stacked.names());
  for (const auto& [name, tensor] : stacked) CHECK(torch::equal(gathered.at(name), tensor));

  // A Dataset subclass without a batch path of its own stacks its samples (the base's batch()).
  struct Counted final : run::Dataset {
    std::size_t size() const override { return 3; }
    hookforge::Entry get(std::size_t i) const override {
      return hookforge::Entry{{"x", torch::full({2}, static_cast<double>(i))}};
    }
  };
  const run::any_dataset counted(std::make_shared<const Counted>());
  const std::vector<std::size_t> two{2, 1};
  CHECK(torch::equal(counted.get_batch(two, 0).at("x"),
                     torch::tensor({{2.0, 2.0}, {1.0, 1.0}}, torch::kFloat)));
}
