
#include <cmath>
#include <filesystem>
#include <functional>
#include <new>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "file_testing.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "resume_testing.hpp"

#include <catch2/catch.hpp>

using namespace tfx;
using namespace hookforge;

namespace {

/// A trainer-level stateful hook: the sum of validation losses seen.
struct ValLossSum {
  double sum = 0;
  void add(TrainerContext& ctx) {
    if (ctx.validated) sum += ctx.val_scores.at("loss");
  }
  hookforge::state_map state_dict() const { return {{"sum", sum}}; }
  void load_state_dict(const hookforge::state_map& s) { sum = s.at("sum").toDouble(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_trainer_epoch_finished));
};

/// Records the learning rates of each epoch.
struct LrLog {
  std::vector<double>* lrs;
  void log(TrainerContext& ctx) { lrs->push_back(ctx.learning_rates.at(0)); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_trainer_epoch_finished));
};

/// The lr of each training batch, as the update it belongs to uses it.
struct BatchLrLog {
  std::vector<double>* lrs;
  void log(TrainingContext& ctx) {
    lrs->push_back(ctx.optimizer->param_groups()[0].options().get_lr());
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_pre_step));
};

struct NoUpdates {
  void veto(TrainingContext& ctx) { ctx.skip_optimizer_step = true; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_post_backward));
};

/// Adds a value to the checkpoint and reads it back.
struct CheckpointNote {
  std::string* seen;
  void write(TrainerContext& ctx) { (*ctx.checkpoint_extra)["note"] = std::string("hello"); }
  void read(TrainerContext& ctx) { *seen = ctx.checkpoint_extra->at("note").toStringRef(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(write, pts::on_before_save_checkpoint),
                          HOOKFORGE_HOOKS_INTO(read, pts::on_after_load_checkpoint));
};

/// Saves the trainer's checkpoint from a hook at point P when the counter `Count` is `at`.
template <class P, std::int64_t TrainerContext::* Count>
struct SaveAt {
  std::int64_t at = -1;
  std::filesystem::path path;
  void save(TrainerContext& ctx) {
    if (ctx.*Count == at) ctx.save_checkpoint(path);
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(save, P));
};
/// When `at` epochs are complete.
using SaveAfter = SaveAt<pts::on_trainer_epoch_finished, &TrainerContext::completed_epochs>;
/// Between two batches, after training step `at`.
using SaveAtStep = SaveAt<pts::on_trainer_step_finished, &TrainerContext::global_step>;

/// Keeps each epoch's trainer context; asks to stop after 2 epochs.
struct Look {
  std::vector<TrainerContext>* seen;
  void look(TrainerContext& ctx) {
    seen->push_back(ctx);
    if (ctx.completed_epochs == 2) ctx.request_stop("enough");
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_trainer_epoch_finished));
};

/// Everything one run needs, built the same way each time.
struct Run {
  Mlp model;
  torch::optim::Adam adam;
  StepLR scheduler;
  ValidationLossDidNotImprove stop{100};
  TrainingEpochRunner<StepCounter> train;
  ValidationEpochRunner<> val;
  Trainer<Mlp, TrainingEpochRunner<StepCounter>, ValidationEpochRunner<>, ValLossSum, SaveAfter>
      trainer;

  explicit Run(std::int64_t epochs, int seed, SaveAfter save = {})
      : model((torch::manual_seed(seed), Mlp())),
        adam(model->parameters(), torch::optim::AdamOptions(0.01)),
        scheduler(adam, 1, 0.9),
        train(adam, training_options{.gradient_accumulation_steps = 2}, StepCounter{}),
        val(inference_options{}),
        trainer(model, train, val,
                trainer_options{.epochs = epochs, .scheduler = &scheduler, .stop = &stop},
                ValLossSum{}, std::move(save)) {}
};

void check_identical(Run& a, Run& b) {
  check_same_training(*a.model, a.adam, *b.model, b.adam);
  CHECK(a.scheduler.last_lr() == b.scheduler.last_lr());
  CHECK(a.scheduler.state_dict().at("last_epoch").toInt() ==
        b.scheduler.state_dict().at("last_epoch").toInt());
  CHECK(a.train.hooks().get<0>().steps == b.train.hooks().get<0>().steps);
  CHECK(a.trainer.hooks().get<0>().sum == b.trainer.hooks().get<0>().sum);  // bit-identical doubles
  CHECK(a.stop.best() == b.stop.best());
  CHECK(a.train.state_dict().at("global_step").toInt() ==
        b.train.state_dict().at("global_step").toInt());
}

}  // namespace

TEST_CASE("4 epochs straight equal 2 epochs + checkpoint + resume + 2 epochs, bit for bit",
          "[trainer][resume]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-resume.ckpt";
  auto criterion = mse;
  ShuffledLoader train_data{regression_data(5, 8, 0.1, 11), {}};
  auto val_data = regression_data(2, 8, 0.1, 12);

  torch::manual_seed(100);
  Run straight(4, 7);
  torch::manual_seed(100);
  straight.trainer.fit(train_data, val_data, criterion);

  torch::manual_seed(100);
  Run first(2, 7);
  torch::manual_seed(100);
  first.trainer.fit(train_data, val_data, criterion);
  first.trainer.save_checkpoint(path);

  Run resumed(4, 99);  // other initial weights: everything must come from the checkpoint
  resumed.trainer.load_checkpoint(path);
  CHECK(resumed.trainer.completed_epochs() == 2);
  auto result = resumed.trainer.fit(train_data, val_data, criterion);
  CHECK(result.completed_epochs == 4);
  check_identical(straight, resumed);
  std::filesystem::remove(path);
}

TEST_CASE("a checkpoint a hook saves at on_trainer_epoch_finished resumes exactly",
          "[trainer][resume]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-hook-save.ckpt";
  std::filesystem::remove(path);
  auto criterion = mse;
  ShuffledLoader train_data{regression_data(5, 8, 0.1, 11), {}};
  auto val_data = regression_data(2, 8, 0.1, 12);

  torch::manual_seed(100);
  Run straight(4, 7, SaveAfter{2, path});
  torch::manual_seed(100);
  straight.trainer.fit(train_data, val_data, criterion);
  REQUIRE(std::filesystem::exists(path));

  Run resumed(4, 99);
  resumed.trainer.load_checkpoint(path);
  CHECK(resumed.trainer.completed_epochs() == 2);
  // StepLR(step 1, gamma 0.9) has stepped twice: epoch 3 runs at 0.01 * 0.9^2.
  CHECK(resumed.adam.param_groups()[0].options().get_lr() ==
        Approx(0.01 * 0.9 * 0.9).epsilon(1e-12));
  resumed.trainer.fit(train_data, val_data, criterion);
  check_identical(straight, resumed);
  std::filesystem::remove(path);
}

TEST_CASE("at on_trainer_epoch_finished the epoch's bookkeeping is done", "[trainer]") {
  std::vector<TrainerContext> seen;
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  StepLR scheduler(sgd, 1, 0.5);
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val, {.epochs = 5, .scheduler = &scheduler, .work_dir = "runs/x"},
                  Look{&seen});
  auto data = regression_data(2, 4);
  auto result = trainer.fit(data, data, mse);
  CHECK(result.completed_epochs == 2);
  CHECK(result.stop_reason == "enough");
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].learning_rates.at(0) == 0.1);
  CHECK(seen[0].next_learning_rates.at(0) == 0.05);
  CHECK(seen[1].learning_rates.at(0) == 0.05);
  CHECK(seen[0].epoch_seconds > 0);
  CHECK(seen[0].work_dir == std::filesystem::path("runs/x"));
  CHECK(seen[0].trainer != nullptr);
  TrainerContext by_hand;
  CHECK_THROWS_WITH(by_hand.save_checkpoint("x.ckpt"), Catch::Contains("not made by a Trainer"));
}

TEST_CASE("hooks add to checkpoints and read them back", "[trainer][checkpoint]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-extra.ckpt";
  std::string seen;
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd, {});
  no_validation none;
  Trainer trainer(model, train, none, trainer_options{}, CheckpointNote{&seen});
  trainer.save_checkpoint(path);
  trainer.load_checkpoint(path);
  CHECK(seen == "hello");
  std::filesystem::remove(path);
}

TEST_CASE("the trainer steps LR schedulers once per epoch, or per update", "[trainer][sched]") {
  auto data = regression_data(2, 4);
  auto criterion = mse;
  std::vector<double> lrs;

  SECTION("StepLR") {
    torch::manual_seed(1);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    StepLR scheduler(sgd, 2, 0.5);
    TrainingEpochRunner train(sgd, {});
    no_validation none;
    Trainer trainer(model, train, none, trainer_options{.epochs = 5, .scheduler = &scheduler},
                    LrLog{&lrs});
    trainer.fit(data, criterion);
    CHECK(lrs == std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.025});
  }
  SECTION("interval step: once per optimiser update, gradient accumulation included") {
    torch::manual_seed(1);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    StepLR scheduler(sgd, 1, 0.5);
    scheduler.set_interval(hookforge::schedule_interval::step);
    std::vector<double> batch_lrs;
    auto six_batches = regression_data(6, 4);  // 3 updates an epoch, over 2 batches each
    TrainingEpochRunner train(sgd, training_options{.gradient_accumulation_steps = 2},
                              BatchLrLog{&batch_lrs});
    no_validation none;
    Trainer trainer(model, train, none, trainer_options{.epochs = 2, .scheduler = &scheduler},
                    LrLog{&lrs});
    trainer.fit(six_batches, criterion);
    CHECK(train.optimizer_steps() == 6);
    CHECK(scheduler.last_epoch() == 6);
    CHECK(batch_lrs == std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125,
                                           0.00625, 0.00625, 0.003125, 0.003125});
    CHECK(lrs == std::vector<double>{0.1, 0.0125});  // the rate each epoch started with
  }
  SECTION("ReduceLROnPlateau gets the validation loss") {
    torch::manual_seed(1);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    ReduceLROnPlateau scheduler(sgd, plateau_options{.factor = 0.5, .patience = 1});
    TrainingEpochRunner train(sgd, {}, NoUpdates{});  // the loss cannot improve
    ValidationEpochRunner val(inference_options{});
    Trainer trainer(model, train, val, trainer_options{.epochs = 6, .scheduler = &scheduler},
                    LrLog{&lrs});
    trainer.fit(data, data, criterion);
    // bad epochs: 0 (first is best), 1, 2 -> reduce; 1, 2 -> reduce
    CHECK(lrs == std::vector<double>{0.1, 0.1, 0.1, 0.05, 0.05, 0.025});
  }
}

TEST_CASE("a stop condition ends training after patience validations", "[trainer][stop]") {
  auto data = regression_data(2, 4);
  auto criterion = mse;
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  ValidationLossDidNotImprove stop(2);
  TrainingEpochRunner train(sgd, {}, NoUpdates{});
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val, trainer_options{.epochs = 10, .stop = &stop});
  auto result = trainer.fit(data, data, criterion);
  CHECK(result.completed_epochs == 3);
  CHECK(result.stop_reason == "stop condition");
}

namespace {

/// Requests the stop at the first backward pass of epoch `at_epoch`, as hookforge-run's
/// signal watcher does from its thread; counts the backward passes.
struct StopMidEpoch {
  std::stop_source* source;
  std::int64_t at_epoch;
  std::int64_t* backward_passes;
  void note(TrainingContext& ctx) {
    if (ctx.epoch == at_epoch) source->request_stop();
    ++*backward_passes;
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(note, pts::on_post_backward));
};

/// What the trainer hooks see of a stop, epoch by epoch.
struct SeeStop {
  std::vector<std::string>* reasons;
  void see(TrainerContext& ctx) { reasons->push_back(ctx.stop_training ? ctx.stop_reason : "-"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_trainer_epoch_finished));
};

}  // namespace

TEST_CASE("a stop_token's request ends the run after the epoch it came in, seen by the hooks",
          "[trainer][stop]") {
  auto data = regression_data(3, 4);
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  std::stop_source source;
  std::int64_t backward_passes = 0;
  std::vector<std::string> reasons;
  TrainingEpochRunner train(sgd, {}, StopMidEpoch{&source, 1, &backward_passes});
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val, {.epochs = 5, .stop_token = source.get_token()},
                  SeeStop{&reasons});
  auto result = trainer.fit(data, data, mse);
  CHECK(result.completed_epochs == 2);
  CHECK(result.stop_reason == "stop requested");
  CHECK(backward_passes == 2 * 3);  // the second epoch ran to its end
  CHECK(reasons == std::vector<std::string>{"-", "stop requested"});
  // A token whose stop was requested before fit(): one epoch, then the stop.
  auto again = trainer.fit(data, data, mse);
  CHECK(again.completed_epochs == 3);
  CHECK(again.stop_reason == "stop requested");
}

namespace {
/// Asks for 2^48 bytes (more than a process's address space) in epoch `at_epoch`.
struct AllocateTooMuch {
  std::int64_t at_epoch;
  void step(TrainingContext& ctx) {
    if (ctx.epoch == at_epoch) (void)torch::empty({std::int64_t{1} << 46});
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};
/// Throws `Error` at on_trainer_epoch_finished.
template <class Error>
struct ThrowAtEpochEnd {
  void end(TrainerContext&) { throw Error("not a memory failure"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(end, pts::on_trainer_epoch_finished));
};
struct BadAllocAtEpochEnd {
  void end(TrainerContext&) { throw std::bad_alloc(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(end, pts::on_trainer_epoch_finished));
};
}  // namespace

TEST_CASE("a memory failure names the part of the run and the epoch", "[trainer][errors]") {
  auto data = regression_data(3, 4);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  ValidationEpochRunner val(inference_options{});
  {
    TrainingEpochRunner train(sgd, {}, AllocateTooMuch{1});
    Trainer trainer(model, train, val, {.epochs = 3});
    const auto what = error_of<out_of_memory>([&] { trainer.fit(data, data, mse); });
    INFO(what);
    CHECK(what.starts_with("out of memory in the training runner during epoch 2 of 3: "));
    CHECK(what.find("281474976710656 bytes") != std::string::npos);  // LibTorch's message
    CHECK(trainer.completed_epochs() == 1);
  }
  {
    TrainingEpochRunner train(sgd, {});
    Trainer trainer(model, train, val, {.epochs = 2}, BadAllocAtEpochEnd{});
    CHECK(error_of<out_of_memory>([&] { trainer.fit(data, data, mse); }) ==
          "out of memory in the trainer's hooks at on_trainer_epoch_finished during epoch 1 of "
          "2: std::bad_alloc (the allocation failed)");
  }
  {  // other errors pass as they are
    TrainingEpochRunner train(sgd, {});
    Trainer trainer(model, train, val, {.epochs = 2}, ThrowAtEpochEnd<std::runtime_error>{});
    CHECK(error_of<std::runtime_error>([&] { trainer.fit(data, data, mse); }) ==
          "not a memory failure");
  }
}

TEST_CASE("bad use is reported clearly", "[trainer][errors]") {
  auto data = regression_data(1, 4);
  torch::manual_seed(1);
  Regressor model;

  SECTION("validation with an empty criterion") {
    ValidationEpochRunner val(inference_options{});
    std::function<torch::Tensor(const Entry&)> empty;
    CHECK_THROWS_WITH(val.run_epoch(model, data, 0, empty),
                      Catch::Contains("validation needs a criterion"));
  }
  SECTION("a checkpoint of another model") {
    tfx::temp_dir scratch;
    auto path = scratch.path / "hookforge-test-other.ckpt";
    torch::optim::SGD sgd(model->parameters(), 0.1);
    TrainingEpochRunner train(sgd, {});
    no_validation none;
    Trainer trainer(model, train, none, trainer_options{});
    trainer.save_checkpoint(path);

    Mlp other;
    torch::optim::SGD sgd2(other->parameters(), 0.1);
    TrainingEpochRunner train2(sgd2, {});
    Trainer trainer2(other, train2, none, trainer_options{});
    CHECK_THROWS_WITH(trainer2.load_checkpoint(path),
                      Catch::Contains(path.string()) && Catch::Contains("fc1"));
    std::filesystem::remove(path);
  }
  SECTION("a monitored score that validation does not produce") {
    torch::optim::SGD sgd(model->parameters(), 0.1);
    ValidationLossDidNotImprove stop(2);
    TrainingEpochRunner train(sgd, {});
    ValidationEpochRunner val(inference_options{});
    Trainer trainer(model, train, val, trainer_options{.stop = &stop, .monitor = "psnr"});
    auto criterion = mse;
    CHECK_THROWS_WITH(trainer.fit(data, data, criterion),
                      Catch::Contains("monitor 'psnr' is not a validation score (scores: loss)"));
  }
  SECTION("accumulation steps below one") {
    torch::optim::SGD sgd(model->parameters(), 0.1);
    CHECK_THROWS_WITH(TrainingEpochRunner(sgd, training_options{.gradient_accumulation_steps = 0}),
                      Catch::Contains("gradient_accumulation_steps must be >= 1"));
  }
}

namespace {
/// Records the global steps at which it ran (wrapped in an every(3) filter below).
struct StepLog {
  std::vector<std::int64_t>* steps;
  void log(TrainingContext& ctx) { steps->push_back(ctx.global_step); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_post_step));
};
}  // namespace

TEST_CASE("event filters keep counting across a resume", "[trainer][resume][filter]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-filter.ckpt";
  auto data = regression_data(5, 4);
  auto criterion = mse;
  auto run = [&](std::int64_t epochs, std::vector<std::int64_t>& seen,
                 std::vector<std::int64_t>& seen_rt, bool save, bool load) {
    torch::manual_seed(1);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    TrainingEpochRunner train(sgd, {}, hookforge::when(StepLog{&seen}, hookforge::every(3)),
                              runtime_hooks{});
    train.hooks().attach(any_hook<TrainingContext>(
        hookforge::when(StepLog{&seen_rt}, hookforge::every(4)), {.key = "runtime_log"}));
    no_validation none;
    Trainer trainer(model, train, none, trainer_options{.epochs = epochs});
    if (load) trainer.load_checkpoint(path);
    trainer.fit(data, criterion);
    if (save) trainer.save_checkpoint(path);
  };
  std::vector<std::int64_t> straight, straight_rt, resumed, resumed_rt;
  run(3, straight, straight_rt, false, false);
  run(1, resumed, resumed_rt, true, false);
  run(3, resumed, resumed_rt, false, true);
  CHECK(straight == std::vector<std::int64_t>{2, 5, 8, 11, 14});
  CHECK(straight_rt == std::vector<std::int64_t>{3, 7, 11});
  CHECK(resumed == straight);
  CHECK(resumed_rt == straight_rt);
  std::filesystem::remove(path);
}

// --- the runner concepts ------------------------------------------------------------------------

#include "../../examples/adversarial_runner/adversarial_runner.hpp"

static_assert(training_runner<TrainingEpochRunner<>>);
static_assert(training_runner<GANTrainingRunner<>>);
static_assert(training_runner<AdversarialTrainingRunner<EpsilonRamp>>);
static_assert(!training_runner<ValidationEpochRunner<>>);  // no optimiser
static_assert(validation_runner<ValidationEpochRunner<>>);
static_assert(validation_runner<InferenceRunner<>>);
static_assert(!validation_runner<int>);

namespace {

/// A classifier for the adversarial runner: forward on a tensor (the runner's attack) and on an
/// Entry.
struct TinyClassifierImpl : torch::nn::Module {
  TinyClassifierImpl() : linear(register_module("linear", torch::nn::Linear(2, 2))) {}
  torch::Tensor forward(const torch::Tensor& x) { return linear(x); }
  torch::Tensor forward(const Entry& e) { return forward(e.at("input")); }
  torch::nn::Linear linear;
};
TORCH_MODULE(TinyClassifier);

std::vector<Entry> class_data(int batches, int size, int seed) {
  torch::manual_seed(seed);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i) {
    auto label = torch::randint(0, 2, {size}, torch::kLong);
    data.push_back(Entry{{"input", torch::randn({size, 2}) + label.unsqueeze(1).to(torch::kFloat)},
                         {"target", label}});
  }
  return data;
}

/// A stateful hook on the adversarial runner's own point.
struct FooledTotal {
  std::int64_t fooled = 0;
  void count(AdversarialContext& ctx) { fooled += ctx.fooled; }
  hookforge::state_map state_dict() const { return {{"fooled", fooled}}; }
  void load_state_dict(const hookforge::state_map& s) { fooled = s.at("fooled").toInt(); }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, on_post_attack));
};

torch::Tensor logits_xent(const torch::Tensor& logits, const torch::Tensor& target) {
  return torch::nn::functional::cross_entropy(logits, target);
}
torch::Tensor entry_xent(const Entry& e) { return logits_xent(e.at("output"), e.at("target")); }

struct AdversarialRun {
  TinyClassifier model;
  torch::optim::Adam adam;
  AdversarialTrainingRunner<EpsilonRamp, FooledTotal> train;
  ValidationEpochRunner<> val;
  Trainer<TinyClassifier, AdversarialTrainingRunner<EpsilonRamp, FooledTotal>,
          ValidationEpochRunner<>, SaveAfter>
      trainer;
  AdversarialRun(std::int64_t epochs, int seed, SaveAfter save = {})
      : model((torch::manual_seed(seed), TinyClassifier())),
        adam(model->parameters(), torch::optim::AdamOptions(0.02)),
        train(adam, EpsilonRamp{0.3, 3}, FooledTotal{}),
        val(inference_options{}),
        trainer(model, train, val, trainer_options{.epochs = epochs}, std::move(save)) {}
};

}  // namespace

TEST_CASE(
    "a runner written with training_runner_base trains through the Trainer and resumes exactly",
    "[trainer][runner][resume]") {
  tfx::temp_dir scratch;
  auto path = scratch.path / "hookforge-test-adversarial.ckpt";
  std::filesystem::remove(path);
  ShuffledLoader train_data{class_data(3, 8, 21), {}};
  auto val_data = class_data(1, 16, 22);

  torch::manual_seed(100);
  AdversarialRun straight(4, 5, SaveAfter{2, path});
  torch::manual_seed(100);
  auto result = straight.trainer.fit(train_data, val_data, logits_xent, entry_xent);
  CHECK(result.completed_epochs == 4);
  CHECK(straight.train.global_step() == 12);
  REQUIRE(std::filesystem::exists(path));
  {
    checkpoint_reader in(path);
    CHECK(in.contains("model"));
    CHECK(in.contains("optimizer"));  // training_runner_base's one optimiser
    CHECK(in.load_state("training_runner").at("global_step").toInt() == 6);
  }

  AdversarialRun resumed(4, 99);
  resumed.trainer.load_checkpoint(path);
  CHECK(resumed.train.global_step() == 6);
  auto resumed_result = resumed.trainer.fit(train_data, val_data, logits_xent, entry_xent);
  CHECK(same(snapshot(*straight.model), snapshot(*resumed.model)));
  CHECK(same_adam_state(straight.adam, resumed.adam));
  CHECK(resumed.train.global_step() == straight.train.global_step());
  CHECK(resumed.train.hooks().get<1>().fooled == straight.train.hooks().get<1>().fooled);
  CHECK(resumed_result.val_scores.at("loss") == result.val_scores.at("loss"));  // bit-identical
  std::filesystem::remove(path);
}

namespace {
/// At on_post_forward: checks that autocast is on (a float mm gives bf16) and adds
/// half the criterion's MSE again, computed on the (bf16) output.
struct ExtraMse {
  bool autocast_seen = false;
  void add(TrainingContext& ctx) {
    autocast_seen =
        torch::mm(torch::ones({2, 2}), torch::ones({2, 2})).scalar_type() == torch::kBFloat16;
    ctx.extra_losses["extra"] =
        0.5 * torch::mse_loss(ctx.entry.at("output"), ctx.entry.at("target"));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_post_forward));
};

/// Copies the gradients at on_post_backward.
struct GradCopy {
  std::vector<torch::Tensor> grads;
  void copy(TrainingContext& ctx) {
    grads.clear();
    for (auto& p : ctx.parameters()) grads.push_back(p.grad().clone());
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(copy, pts::on_post_backward));
};
}  // namespace

TEST_CASE("an extra loss added at on_post_forward trains under mixed precision",
          "[trainer][runner][amp]") {
  torch::manual_seed(3);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(),
                        0.0);  // lr 0: the gradients are compared on fixed weights
  auto data = regression_data(1, 8);
  TrainingEpochRunner runner(sgd, training_options{.mixed_precision = true}, ExtraMse{},
                             GradCopy{});
  auto result = runner.run_epoch(model, data, 0, mse);
  CHECK(runner.hooks().get<0>().autocast_seen);
  CHECK(std::isfinite(result.scores.at("extra")));
  const auto& grads = runner.hooks().get<1>().grads;
  REQUIRE(grads.size() == 2);

  // The criterion's gradient alone, under the same autocast: the runner's is 1.5 times it.
  std::vector<torch::Tensor> expected;
  {
    model->zero_grad();
    torch::Tensor loss;
    {
      autocast_guard autocast(torch::kCPU, true);
      Entry batch = data[0];
      batch.merge(call_model(model, batch));
      loss = mse(batch);
    }
    loss.backward();
    for (auto& p : model->parameters()) expected.push_back(p.grad().clone());
  }
  for (std::size_t i = 0; i < grads.size(); ++i) {
    INFO("parameter " << i << ": " << grads[i] << " vs 1.5 x " << expected[i]);
    CHECK(torch::allclose(grads[i], 1.5 * expected[i], /*rtol=*/2e-2, /*atol=*/1e-5));
  }
}

namespace {

/// A crash (an exception) after training step `at_step`: a run killed there.
struct CrashAtStep {
  std::int64_t at_step = -1;
  void step(TrainingContext& ctx) {
    if (ctx.global_step + 1 == at_step) throw std::runtime_error("killed");
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};

/// Raises the learning rate batch by batch (as a warm-up does), so the epoch's rates differ
/// from the optimiser's rate in the middle of an epoch.
struct RaiseLr {
  void raise(TrainingContext& ctx) {
    for (auto& group : ctx.optimizer->param_groups())
      group.options().set_lr(group.options().get_lr() * 1.01);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(raise, pts::on_pre_step));
};

/// Requests a stop at training step 12 (a SIGTERM arriving then).
struct StopAt12 {
  std::stop_source* source;
  void step(TrainingContext& ctx) {
    if (ctx.global_step + 1 == 12) source->request_stop();
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};

using MidLoader = DataLoader<tensor_dataset>;

MidLoader mid_loader(std::int64_t workers) {
  torch::manual_seed(5);
  auto x = torch::randn({37, 2});
  auto y = (x.select(1, 0) * 3.0 - x.select(1, 1) * 2.0 + 0.5).unsqueeze(1);
  return MidLoader(tensor_dataset{{"input", x}, {"target", y}},
                   {.batch_size = 4, .shuffle = true, .seed = 3, .workers = workers});
}

/// A run whose checkpoints may be taken between batches: 10 batches an epoch, gradients
/// accumulated over 2, dropout, a per-batch learning rate change and a step scheduler.
struct MidRun {
  Mlp model;
  torch::optim::Adam adam;
  StepLR scheduler;
  TrainingEpochRunner<RaiseLr, CrashAtStep> train;
  ValidationEpochRunner<> val;
  Trainer<Mlp, TrainingEpochRunner<RaiseLr, CrashAtStep>, ValidationEpochRunner<>, ValLossSum,
          SaveAtStep>
      trainer;

  MidRun(int seed, SaveAtStep save = {}, CrashAtStep crash = {},
         hookforge::schedule_interval interval = hookforge::schedule_interval::epoch)
      : model((torch::manual_seed(seed), Mlp())),
        adam(model->parameters(), torch::optim::AdamOptions(0.01)),
        scheduler(adam, 1, 0.9),
        train(adam, training_options{.gradient_accumulation_steps = 2}, RaiseLr{}, crash),
        val(inference_options{}),
        trainer(model, train, val, trainer_options{.epochs = 3, .scheduler = &scheduler},
                ValLossSum{}, std::move(save)) {
    scheduler.set_interval(interval);
  }
};

}  // namespace

TEST_CASE("a checkpoint taken between two batches resumes in the middle of the epoch, bit for bit",
          "[trainer][resume][mid-epoch]") {
  const std::int64_t workers = GENERATE(0, 2);
  // The scheduler stepped per epoch, or per update (then mid-way through its steps).
  const auto interval =
      GENERATE(hookforge::schedule_interval::epoch, hookforge::schedule_interval::step);
  CAPTURE(workers, interval == hookforge::schedule_interval::step);
  tfx::temp_dir scratch;
  const auto path = scratch.path / "mid.ckpt";
  auto val_data = regression_data(2, 8, 0.1, 12);

  torch::manual_seed(100);
  MidRun straight(7, {}, {}, interval);
  auto train_data = mid_loader(workers);
  torch::manual_seed(100);
  const auto expected = straight.trainer.fit(train_data, val_data, mse);
  REQUIRE(expected.history.size() == 3);

  // Saved after step 14 (epoch 2, batch 4: an update), killed after step 17.
  torch::manual_seed(100);
  MidRun killed(7, SaveAtStep{14, path}, CrashAtStep{17}, interval);
  auto killed_data = mid_loader(workers);
  torch::manual_seed(100);
  CHECK_THROWS_WITH(killed.trainer.fit(killed_data, val_data, mse), "killed");
  REQUIRE(std::filesystem::exists(path));

  MidRun resumed(99, {}, {}, interval);  // other weights, a fresh loader: all from the file
  auto resumed_data = mid_loader(workers);
  torch::manual_seed(12345);  // another global RNG state: the checkpoint's is restored
  resumed.trainer.load_checkpoint(path);
  CHECK(resumed.trainer.completed_epochs() == 1);
  const auto result = resumed.trainer.fit(resumed_data, val_data, mse);

  REQUIRE(result.history.size() == 2);
  for (std::size_t e = 0; e < 2; ++e) {
    CHECK(result.history[e].train_scores == expected.history[e + 1].train_scores);
    CHECK(result.history[e].val_scores == expected.history[e + 1].val_scores);
    CHECK(result.history[e].learning_rates == expected.history[e + 1].learning_rates);
  }
  check_same_training(*straight.model, straight.adam, *resumed.model, resumed.adam);
  CHECK(straight.trainer.hooks().get<0>().sum == resumed.trainer.hooks().get<0>().sum);
  CHECK(resumed.train.global_step() == straight.train.global_step());
  CHECK(resumed.scheduler.last_epoch() == straight.scheduler.last_epoch());
}

TEST_CASE("a checkpoint between two batches is refused where it could not resume exactly",
          "[trainer][resume][mid-epoch][errors]") {
  tfx::temp_dir scratch;
  auto val_data = regression_data(2, 8, 0.1, 12);
  SECTION("gradients wait for an update") {
    MidRun run(7, SaveAtStep{13, scratch.path / "odd.ckpt"});  // epoch 2, batch 3 of 2+2+...
    auto data = mid_loader(0);
    CHECK_THROWS_WITH(run.trainer.fit(data, val_data, mse),
                      Catch::Contains("after batch 3 of epoch 2 would lose the gradients that "
                                      "wait for an update"));
    CHECK_FALSE(std::filesystem::exists(scratch.path / "odd.ckpt"));
  }
  SECTION("a loader without a position") {
    MidRun run(7, SaveAtStep{2, scratch.path / "vector.ckpt"});
    auto data = regression_data(5, 8, 0.1, 11);
    CHECK_THROWS_WITH(run.trainer.fit(data, val_data, mse),
                      Catch::Contains("needs the training loader's position, and this loader has "
                                      "no state_dict()"));
  }
  SECTION("resuming it with a loader without load_state_dict") {
    const auto path = scratch.path / "mid.ckpt";
    MidRun saved(7, SaveAtStep{4, path}, CrashAtStep{5});
    auto data = mid_loader(0);
    CHECK_THROWS(saved.trainer.fit(data, val_data, mse));
    MidRun resumed(7);
    resumed.trainer.load_checkpoint(path);
    auto vector_data = regression_data(5, 8, 0.1, 11);
    CHECK_THROWS_WITH(resumed.trainer.fit(vector_data, val_data, mse),
                      "Trainer: the checkpoint was taken in the middle of epoch 1 (after batch "
                      "4); the training loader has no load_state_dict() to go on from there "
                      "(hookforge::DataLoader has)");
    // Refused, the checkpoint's position is kept: with a DataLoader the epoch goes on after
    // batch 4 (30 steps in all), not from its start (34).
    auto loader = mid_loader(0);
    resumed.trainer.fit(loader, val_data, mse);
    CHECK(resumed.train.global_step() == 30);
  }
}

TEST_CASE("a stop request ends the run at the batch a hook saved, and the run resumes there",
          "[trainer][resume][mid-epoch][stop]") {
  tfx::temp_dir scratch;
  auto val_data = regression_data(2, 8, 0.1, 12);
  torch::manual_seed(100);
  MidRun straight(7);
  auto straight_data = mid_loader(0);
  torch::manual_seed(100);
  straight.trainer.fit(straight_data, val_data, mse);

  // A CheckpointSaver (by epoch) saves the stop at the first batch that updates after it.
  std::stop_source source;
  torch::manual_seed(100);
  Mlp model((torch::manual_seed(7), Mlp()));
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(0.01));
  StepLR scheduler(adam, 1, 0.9);
  TrainingEpochRunner train(adam, training_options{.gradient_accumulation_steps = 2}, RaiseLr{},
                            StopAt12{&source});
  ValidationEpochRunner val(inference_options{});
  CheckpointSaver saver({.out_dir = scratch.path});
  Trainer trainer(
      model, train, val,
      trainer_options{.epochs = 3, .scheduler = &scheduler, .stop_token = source.get_token()},
      ValLossSum{}, hookforge::ref(saver));
  auto data = mid_loader(0);
  torch::manual_seed(100);
  const auto stopped = trainer.fit(data, val_data, mse);
  CHECK(stopped.mid_epoch);
  CHECK(stopped.stop_reason == "stop requested");
  CHECK(stopped.completed_epochs == 1);
  CHECK(stopped.global_step == 12);  // epoch 2, batch 2: an update
  CHECK(saver.last_file() == "iter_12.pt");

  MidRun resumed(99);
  auto resumed_data = mid_loader(0);
  resumed.trainer.load_checkpoint(*latest_checkpoint(scratch.path));
  resumed.trainer.fit(resumed_data, val_data, mse);
  check_same_training(*straight.model, straight.adam, *resumed.model, resumed.adam);
}
