// The runner-level built-in hooks: ProgressBar, GradientClip, EMA, IterTimer,
// CheckInvalidLoss, LRWarmup, EmptyCache, HookProfiler — attached statically, by ref,
// and as runtime any_hooks, on small CPU models.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../torch/fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#include "../torch/file_testing.hpp"
#include "hookforge/hooks/check_invalid_loss.hpp"
#include "hookforge/hooks/ema.hpp"
#include "hookforge/hooks/empty_cache.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "hookforge/hooks/hook_profiler.hpp"
#include "hookforge/hooks/iter_timer.hpp"
#include "hookforge/hooks/lr_warmup.hpp"
#include "hookforge/hooks/progress_bar.hpp"

using namespace tfx;
using namespace hookforge;
using Catch::Matchers::Contains;

namespace {

/// Runs after every built-in hook: the gradients and learning rate the update will use.
struct UpdateProbe {
  std::vector<torch::Tensor>* grads = nullptr;  // concatenated, per batch whose update follows
  std::vector<double>* lrs = nullptr;           // group 0's rate, per batch
  static constexpr int priority = hookforge::priority::LOWEST;
  void see(TrainingContext& ctx) {
    if (lrs) lrs->push_back(ctx.optimizer->param_groups()[0].options().get_lr());
    if (!grads || !ctx.optimizer_step_due) return;
    std::vector<torch::Tensor> flat;
    for (auto& p : ctx.parameters()) flat.push_back(p.grad().detach().flatten().clone());
    grads->push_back(torch::cat(flat));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_backward));
};

/// The model's parameters at each on_post_step (after EMA's update), or at validation.
struct WeightProbe {
  torch::nn::Module* model;
  std::vector<std::vector<torch::Tensor>>* seen;
  static constexpr int priority = hookforge::priority::LOWEST;
  template <class C>
  void see(C&) {
    seen->push_back(snapshot(*model));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_step));
};

/// Sleeps at a point: data time (after IterTimer's on_post_step) or step time (post_forward).
struct Sleeper {
  static constexpr int priority = hookforge::priority::LOWEST;
  void after_step(TrainingContext&) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }
  void in_step(TrainingContext&) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(after_step, pts::on_post_step),
                          HOOKFORGE_HOOKS_INTO(in_step, pts::on_post_forward));
};

/// A model whose EMA is shared by ref between a training and a validation runner.
struct EmaRun {
  Regressor model;
  torch::optim::SGD sgd;
  EMA ema;
  TrainingEpochRunner<ref_hook<EMA>> train;
  ValidationEpochRunner<ref_hook<EMA>> val;
  explicit EmaRun(int seed, double momentum = 0.5)
      : model((torch::manual_seed(seed), Regressor())),
        sgd(model->parameters(), 0.1),
        ema(model, {.momentum = momentum}),
        train(sgd, {}, hookforge::ref(ema)),
        val({}, hookforge::ref(ema)) {}
  EmaRun(const EmaRun&) = delete;  // the runners refer to the members
};

/// A TrainingContext over `optimizer`, as the runner makes it at on_post_backward.
TrainingContext backward_context(torch::optim::Optimizer& optimizer) {
  TrainingContext ctx;
  ctx.optimizer = &optimizer;
  ctx.optimizer_step_due = true;
  ctx.epoch = 1;
  ctx.batch_idx = 4;
  ctx.global_step = 9;
  return ctx;
}

std::int64_t profiled_calls(const HookProfiler& profiler) {
  std::int64_t calls = 0;
  for (const auto& row : profiler.timings()) calls += row.calls;
  return calls;
}

// --- a small GAN: G(x) = a x + b, D a logistic regression --------------------------------
struct AffineGeneratorImpl : torch::nn::Module {
  AffineGeneratorImpl() : fc(register_module("fc", torch::nn::Linear(1, 1))) {}
  torch::Tensor forward(const Entry& e) { return fc(e.at("input")); }
  torch::nn::Linear fc;
};
TORCH_MODULE(AffineGenerator);

struct LogisticDiscriminatorImpl : torch::nn::Module {
  LogisticDiscriminatorImpl() : fc(register_module("fc", torch::nn::Linear(1, 1))) {}
  torch::Tensor forward(const Entry& e) { return fc(e.at("input")); }
  torch::nn::Linear fc;
};
TORCH_MODULE(LogisticDiscriminator);

torch::Tensor d_softplus(const Entry& e) {
  return torch::softplus(-e.at("d_real")).mean() + torch::softplus(e.at("d_fake")).mean();
}
torch::Tensor g_softplus(const Entry& e) { return torch::softplus(-e.at("d_fake_for_g")).mean(); }

std::vector<Entry> noise_batches(int batches) {
  torch::manual_seed(3);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i)
    data.push_back(Entry{{"input", torch::randn({4, 1})}, {"target", 2.0 + torch::randn({4, 1})}});
  return data;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// GradientClip

TEST_CASE("GradientClip clips by norm, by inf-norm and by value as PyTorch does",
          "[hooks][gradient_clip]") {
  auto a = torch::zeros({2}, torch::requires_grad());
  auto b = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD sgd({a, b}, 0.1);
  auto set_grads = [&] {
    a.mutable_grad() = torch::tensor({3.0f, 4.0f});
    b.mutable_grad() = torch::tensor({12.0f});
  };
  auto ctx = backward_context(sgd);

  SECTION("2-norm: the total is 13, scaled to 6.5") {
    set_grads();
    GradientClip clip{6.5};
    clip.clip_all_grads(ctx);
    CHECK(clip.last_norm().item<double>() == Approx(13.0));
    const double scale = 6.5 / (13.0 + 1e-6);
    CHECK(torch::allclose(a.grad(), torch::tensor({3.0f, 4.0f}) * scale));
    CHECK(torch::allclose(b.grad(), torch::tensor({12.0f}) * scale));
  }
  SECTION("a norm under max_norm is left alone") {
    set_grads();
    GradientClip{20.0}.clip_all_grads(ctx);
    CHECK(torch::equal(a.grad(), torch::tensor({3.0f, 4.0f})));
  }
  SECTION("inf-norm: the largest |g| is 12, scaled to 6") {
    set_grads();
    GradientClip clip{{.max_norm = 6.0, .norm_type = std::numeric_limits<double>::infinity()}};
    clip.clip_all_grads(ctx);
    CHECK(clip.last_norm().item<double>() == Approx(12.0));
    CHECK(b.grad().item<double>() == Approx(6.0).epsilon(1e-6));
    CHECK(a.grad()[1].item<double>() == Approx(2.0).epsilon(1e-6));
  }
  SECTION("by value: each element clamped") {
    set_grads();
    GradientClip{{.clip_value = 3.5}}.clip_all_grads(ctx);
    CHECK(torch::equal(a.grad(), torch::tensor({3.0f, 3.5f})));
    CHECK(torch::equal(b.grad(), torch::tensor({3.5f})));
  }
  SECTION("accumulating: gradients of a batch without an update are not touched") {
    set_grads();
    ctx.optimizer_step_due = false;
    GradientClip{1.0}.clip_all_grads(ctx);
    CHECK(torch::equal(b.grad(), torch::tensor({12.0f})));
  }
  SECTION("clipping reads nothing on the host") {
    set_grads();
    const auto reads = host_reads();
    GradientClip{1.0}.clip_all_grads(ctx);
    CHECK(host_reads() == reads);
  }
}

TEST_CASE("GradientClip's non-finite check: error names the batch, skip_step vetoes the update",
          "[hooks][gradient_clip]") {
  auto a = torch::zeros({2}, torch::requires_grad());
  torch::optim::SGD sgd({a}, 0.1);
  a.mutable_grad() = torch::tensor({1.0f, std::numeric_limits<float>::quiet_NaN()});
  auto ctx = backward_context(sgd);

  GradientClip error{{.max_norm = 1.0, .nonfinite = nonfinite_grads::error}};
  const auto reads = host_reads();
  CHECK_THROWS_WITH(error.clip_all_grads(ctx),
                    Contains("GradientClip: the gradients' total norm is nan at "
                             "epoch 1, batch 4 (0-based; global step 9)"));
  CHECK(host_reads() == reads + 1);

  GradientClip skip{{.clip_value = 1.0, .nonfinite = nonfinite_grads::skip_step}};
  skip.clip_all_grads(ctx);
  CHECK(ctx.skip_optimizer_step);
  CHECK(skip.skipped_steps() == 1);

  a.mutable_grad() = torch::tensor({1.0f, 2.0f});
  ctx.skip_optimizer_step = false;
  skip.clip_all_grads(ctx);
  CHECK_FALSE(ctx.skip_optimizer_step);
}

TEST_CASE("GradientClip on a training runner clips the accumulated gradient before each update",
          "[hooks][gradient_clip]") {
  auto data = regression_data(4, 8);
  auto run = [&](auto clip) {
    torch::manual_seed(5);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.05);
    std::vector<torch::Tensor> grads;
    TrainingEpochRunner runner(sgd, {.gradient_accumulation_steps = 2}, std::move(clip),
                               UpdateProbe{&grads});
    runner.run_epoch(model, data, 0, mse);
    return grads;
  };
  auto clipped = run(GradientClip{0.5});
  auto plain = run(hookforge::unbind<"clip_all_grads">(GradientClip{0.5}));
  REQUIRE(clipped.size() == 2);  // updates after batches 1 and 3
  CHECK(clipped[0].norm().item<double>() == Approx(0.5).epsilon(1e-5));
  CHECK(plain[0].norm().item<double>() > 0.5);
  CHECK(torch::allclose(clipped[0], plain[0] * (0.5 / (plain[0].norm() + 1e-6))));
}

// ---------------------------------------------------------------------------------------
// EMA

TEST_CASE("EMA: the first update copies, then ema = (1 - m) ema + m param", "[hooks][ema]") {
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  EMA ema{model, {.momentum = 0.25}};
  std::vector<std::vector<torch::Tensor>> after_step;
  TrainingEpochRunner train(sgd, {}, hookforge::ref(ema), WeightProbe{model.get(), &after_step});
  train.run_epoch(model, regression_data(3, 4), 0, mse);

  REQUIRE(after_step.size() == 3);
  REQUIRE(ema.steps() == 3);
  auto expected = after_step[0];  // the first update: an exact copy
  for (std::size_t s = 1; s < 3; ++s)
    for (std::size_t i = 0; i < expected.size(); ++i)
      expected[i] = 0.75 * expected[i] + 0.25 * after_step[s][i];
  auto averaged = ema.averaged();
  CHECK(torch::allclose(averaged.at("linear.weight"), expected[0], 1e-6, 1e-7));
  CHECK(torch::allclose(averaged.at("linear.bias"), expected[1], 1e-6, 1e-7));
  CHECK(same(snapshot(*model), after_step[2]));  // training stays on the raw weights

  SECTION("begin_iter: updates before it are not averaged, the first one after copies") {
    torch::manual_seed(1);
    Regressor m2;
    torch::optim::SGD sgd2(m2->parameters(), 0.1);
    EMA late{m2, {.momentum = 0.25, .begin_iter = 3}};  // the third update (MMEngine's rule)
    TrainingEpochRunner train2(sgd2, {}, hookforge::ref(late));
    train2.run_epoch(m2, regression_data(3, 4), 0, mse);
    CHECK(late.steps() == 1);
    CHECK(torch::equal(late.averaged().at("linear.weight"), m2->linear->weight));
  }
}

TEST_CASE("EMA shared by ref: validation sees the average, training continues on the raw weights",
          "[hooks][ema]") {
  torch::manual_seed(2);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  EMA ema{model, {.momentum = 0.5}};
  std::vector<std::vector<torch::Tensor>> during_validation;
  TrainingEpochRunner train(sgd, {}, hookforge::ref(ema));
  ValidationEpochRunner val({}, hookforge::ref(ema), WeightProbe{model.get(), &during_validation});

  // Before any update there is no average: validation uses the model as it is.
  val.run_epoch(model, regression_data(1, 4), 0, mse);
  CHECK(same(during_validation.back(), snapshot(*model)));

  train.run_epoch(model, regression_data(4, 4), 0, mse);
  const auto raw = snapshot(*model);
  auto averaged = ema.averaged();
  val.run_epoch(model, regression_data(2, 4), 0, mse);
  REQUIRE(during_validation.size() == 3);
  CHECK(torch::equal(during_validation[1][0], averaged.at("linear.weight")));
  CHECK(torch::equal(during_validation[2][1], averaged.at("linear.bias")));
  CHECK_FALSE(torch::equal(averaged.at("linear.weight"), raw[0]));
  CHECK(same(snapshot(*model), raw));  // swapped back at on_epoch_end
  CHECK_FALSE(ema.swapped());
}

TEST_CASE("EMA in a checkpoint: the model section holds the average, a resume restores both",
          "[hooks][ema]") {
  temp_dir dir;
  const auto path = dir.path / "ema.ckpt";
  EmaRun a(3);
  a.train.run_epoch(a.model, regression_data(3, 4), 0, mse);
  const auto raw = snapshot(*a.model);
  const auto averaged = a.ema.averaged();

  // What the Trainer does around its save (on_before/after_save_checkpoint).
  TrainerContext trainer_ctx;
  a.ema.handle(trainer_ctx, pts::on_before_save_checkpoint{});
  {
    checkpoint_writer out;
    out.add_module("model", *a.model);
    save_component(out, "training_runner", a.train);
    save_component(out, "validation_runner", a.val);
    out.save(path);
  }
  a.ema.handle(trainer_ctx, pts::on_after_save_checkpoint{});
  CHECK(same(snapshot(*a.model), raw));

  checkpoint_reader in(path);
  Regressor deployed;
  in.load_module("model", *deployed);
  CHECK(torch::equal(deployed->linear->weight, averaged.at("linear.weight")));

  // A fresh process: other weights, an empty EMA.
  EmaRun b(99);
  load_component(in, "training_runner", b.train);
  load_component(in, "validation_runner", b.val);
  in.load_module("model", *b.model);  // the average, as the trainer loads it
  b.ema.handle(trainer_ctx, pts::on_after_load_checkpoint{});
  CHECK(same(snapshot(*b.model), raw));
  CHECK(b.ema.steps() == a.ema.steps());
  CHECK(torch::equal(b.ema.averaged().at("linear.weight"), averaged.at("linear.weight")));
  CHECK(torch::equal(b.ema.averaged().at("linear.bias"), averaged.at("linear.bias")));

  // The next updates agree too.
  auto more = regression_data(2, 4, 0.0, 7);
  a.train.run_epoch(a.model, more, 1, mse);
  b.train.run_epoch(b.model, more, 1, mse);
  CHECK(same(snapshot(*b.model), snapshot(*a.model)));
  CHECK(torch::equal(b.ema.averaged().at("linear.weight"), a.ema.averaged().at("linear.weight")));
}

TEST_CASE("EMA's state is stored once in a checkpoint however many components share it",
          "[hooks][ema]") {
  temp_dir dir;
  torch::nn::Linear model(128, 128);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  EMA ema{model};
  ema.update();
  TrainingEpochRunner train(sgd, {}, hookforge::ref(ema));
  ValidationEpochRunner val({}, hookforge::ref(ema));
  auto size_with = [&](bool both) {
    const auto path = dir.path / (both ? "both.ckpt" : "one.ckpt");
    TrainerContext ctx;
    ema.handle(ctx, pts::on_before_save_checkpoint{});
    checkpoint_writer out;
    out.add_module("model", *model);
    save_component(out, "training_runner", train);
    if (both) save_component(out, "validation_runner", val);
    out.save(path);
    ema.handle(ctx, pts::on_after_save_checkpoint{});
    return static_cast<double>(std::filesystem::file_size(path));
  };
  const double one = size_with(false), both = size_with(true);
  const double tensor_bytes = 128.0 * 129 * 4;
  CHECK(both - one < 0.1 * tensor_bytes);
}

namespace {
/// EmaRun with a Trainer around it (the EMA attached to the trainer too).
struct EmaTrainerRun : EmaRun {
  Trainer<Regressor, decltype(train), decltype(val), ref_hook<EMA>> trainer;
  EmaTrainerRun(int seed, std::int64_t epochs)
      : EmaRun(seed, 0.3),
        trainer(model, train, val, trainer_options{.epochs = epochs}, hookforge::ref(ema)) {}
};
}  // namespace

TEST_CASE("EMA through the Trainer: saved with the average, resumed exactly", "[hooks][ema]") {
  temp_dir dir;
  const auto path = dir.path / "trainer.ckpt";
  auto data = regression_data(3, 4);
  EmaTrainerRun straight(1, 4);
  straight.trainer.fit(data, data, mse);

  EmaTrainerRun first(1, 2);
  first.trainer.fit(data, data, mse);
  const auto raw = snapshot(*first.model);
  first.trainer.save_checkpoint(path);
  CHECK(same(snapshot(*first.model), raw));  // swapped back after the save
  Regressor deployed;
  checkpoint_reader(path).load_module("model", *deployed);
  CHECK(torch::equal(deployed->linear->weight, first.ema.averaged().at("linear.weight")));

  EmaTrainerRun resumed(42, 4);
  resumed.trainer.load_checkpoint(path);
  CHECK(same(snapshot(*resumed.model), raw));
  resumed.trainer.fit(data, data, mse);
  CHECK(same(snapshot(*resumed.model), snapshot(*straight.model)));
  CHECK(torch::equal(resumed.ema.averaged().at("linear.weight"),
                     straight.ema.averaged().at("linear.weight")));
  CHECK(resumed.ema.steps() == straight.ema.steps());
}

TEST_CASE("EMA's state_dict is checked against the model", "[hooks][ema]") {
  Regressor model;
  EMA ema{model};
  ema.update();
  auto state = ema.state_dict();
  CHECK(state.at("steps").toInt() == 1);
  CHECK_FALSE(state.at("swapped").toBool());
  auto wrong = state;
  wrong["averaged.linear.weight"] = torch::zeros({3, 3});
  CHECK_THAT(
      error_of<std::invalid_argument>([&] { ema.load_state_dict(wrong); }),
      Contains(
          "EMA: state entry 'averaged.linear.weight' has shape [3, 3], the model's tensor [1, 2]"));
  auto missing = state;
  missing.erase("averaged.linear.bias");
  CHECK_THAT(error_of<std::invalid_argument>([&] { ema.load_state_dict(missing); }),
             Contains("EMA: the saved state has no 'averaged.linear.bias' (it has: "));
  ema.load_state_dict(through_pickle(state));
  CHECK(ema.steps() == 1);
}

// ---------------------------------------------------------------------------------------
// IterTimer

TEST_CASE("IterTimer splits each iteration into data and step time, with ETAs",
          "[hooks][iter_timer]") {
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  IterTimer timer;
  TrainingEpochRunner train(sgd, {}, hookforge::ref(timer), Sleeper{});
  ValidationEpochRunner val({}, hookforge::ref(timer));
  train.set_total_epochs(3);
  train.run_epoch(model, regression_data(4, 4), 0, mse);
  val.run_epoch(model, regression_data(2, 4), 0, mse);

  const auto& t = timer.training();
  CHECK(t.iterations == 4);
  CHECK(t.mean_data >= 0.0015);  // Sleeper's 2 ms after each step is the next batch's wait
  CHECK(t.mean_step >= 0.0015);  // and 2 ms at on_post_forward is inside the step
  CHECK(t.mean_iteration == Approx(t.mean_data + t.mean_step));
  CHECK(t.epoch_eta == 0);
  CHECK(t.run_eta == Approx(t.mean_iteration * 4 * 2));  // two more epochs of 4 batches
  CHECK(t.elapsed >= t.mean_iteration * 4 * 0.99);
  CHECK(t.device_steps == 0);  // CPU batches: nothing to time on a GPU
  CHECK(t.device_step == -1);
  CHECK(t.mean_device_step == -1);

  const auto& v = timer.evaluation();
  CHECK(v.iterations == 2);
  CHECK(v.data == 0);  // no on_pre_step on a validation runner
  CHECK(v.run_eta == -1);
  CHECK(&timer.of(InferenceContext{}) == &v);
}

// ---------------------------------------------------------------------------------------
// ProgressBar

TEST_CASE(
    "ProgressBar without a terminal writes plain lines and reads the loss every refresh batches",
    "[hooks][progress_bar]") {
  std::ostringstream out;
  ProgressBar bar{{.refresh = 2, .stream = &out}};
  CHECK_FALSE(bar.terminal());
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  TrainingEpochRunner train(sgd, {}, hookforge::ref(bar));
  ValidationEpochRunner val({}, hookforge::ref(bar));
  train.set_total_epochs(2);
  val.set_total_epochs(2);

  const auto before = host_reads();
  train.run_epoch(model, regression_data(5, 4), 1, mse);
  CHECK(host_reads() - before == 3);  // ceil(5 / 2): batches 2, 4 and the last, 5

  std::vector<std::string> lines;
  std::istringstream text(out.str());
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  REQUIRE(lines.size() == 4);
  CHECK_THAT(lines[0],
             Contains("train epoch 2/2 batch 2/5 |") && Contains(" | eta ") && Contains("| loss "));
  CHECK_THAT(lines[1], Contains("batch 4/5"));
  CHECK_THAT(lines[2], Contains("batch 5/5"));
  CHECK_THAT(lines[3], Contains("train epoch 2/2 done: 5 batches in ") && Contains("| loss "));
  CHECK(out.str().find('\r') == std::string::npos);

  out.str("");
  const auto before_val = host_reads();
  val.run_epoch(model, regression_data(3, 4), 1, mse);
  CHECK(host_reads() - before_val == 2);  // ceil(3 / 2)
  CHECK_THAT(out.str(),
             Contains("val epoch 2/2 batch 2/3") && Contains("val epoch 2/2 done: 3 batches"));
}

TEST_CASE("ProgressBar on a terminal redraws one line in place", "[hooks][progress_bar]") {
  std::ostringstream out;
  IterTimer timer;
  ProgressBar bar{
      {.refresh = 3, .stream = &out, .force_terminal = true, .width = 10, .timer = &timer}};
  CHECK(bar.terminal());
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  TrainingEpochRunner train(sgd, {}, hookforge::ref(timer), hookforge::ref(bar));
  const auto before = host_reads();
  train.run_epoch(model, regression_data(7, 4), 0, mse);
  CHECK(host_reads() - before == 3);  // ceil(7 / 3)

  const auto text = out.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);  // only the epoch's end ends the line
  CHECK(std::count(text.begin(), text.end(), '\r') == 4);  // batches 3, 6, 7 and the end
  CHECK_THAT(text, Contains("\rtrain epoch 1  42% |####......| 3/7 [") && Contains(" loss ") &&
                       Contains(" data ") && Contains("ms step "));
  const auto last = text.substr(text.rfind('\r'));
  CHECK_THAT(last, Contains("train epoch 1 100% |##########| 7/7 [") && Contains("| loss "));
  CHECK(last.back() == '\n');
}

TEST_CASE("ProgressBar: the bar's parameters are checked", "[hooks][progress_bar]") {
  CHECK_THAT(error_of<std::invalid_argument>([] { ProgressBar{{.refresh = 0}}; }),
             Contains("ProgressBar: refresh must be >= 1, got 0"));
  CHECK_THAT(error_of<std::invalid_argument>([] { ProgressBar{{.width = -1}}; }),
             Contains("ProgressBar: width must be >= 0"));
}

// ---------------------------------------------------------------------------------------
// CheckInvalidLoss

TEST_CASE("CheckInvalidLoss raises at a NaN loss, naming the epoch and batch, before the update",
          "[hooks][check_invalid_loss]") {
  auto data = regression_data(5, 4);
  data[3].at("target")[0][0] = std::numeric_limits<float>::quiet_NaN();
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  std::vector<std::vector<torch::Tensor>> after_step;
  TrainingEpochRunner train(sgd, {}, CheckInvalidLoss{{.interval = 1}},
                            WeightProbe{model.get(), &after_step});
  const auto reads = host_reads();
  CHECK_THROWS_WITH(
      train.run_epoch(model, data, 2, mse),
      Contains("CheckInvalidLoss: loss is nan at epoch 2, batch 3 (0-based; global step 3)"));
  CHECK(host_reads() - reads == 4);
  REQUIRE(after_step.size() == 3);
  CHECK(same(snapshot(*model), after_step.back()));  // the NaN batch's update was not applied
}

TEST_CASE("CheckInvalidLoss: stop skips the updates and stops training, interval spaces the reads",
          "[hooks][check_invalid_loss]") {
  auto data = regression_data(6, 4);
  data[1].at("target")[0][0] = std::numeric_limits<float>::infinity();
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  const auto initial = snapshot(*model);
  CheckInvalidLoss check{{.interval = 2, .action = invalid_loss_action::stop}};
  TrainingEpochRunner train(sgd, {}, hookforge::ref(check));
  capture_warnings warnings;
  const auto reads = host_reads();
  auto result = train.run_epoch(model, data, 0, mse);
  CHECK(host_reads() - reads == 1);  // batch 1 (global step 1) is checked; then no more
  CHECK(result.stop_training);
  CHECK_THAT(check.last_message(), Contains("loss is inf at epoch 0, batch 1"));
  REQUIRE(warnings.messages.size() == 1);
  CHECK_THAT(warnings.messages[0], Contains("training stops after this epoch"));
  // The first batch's update happened; the bad one and every later one were skipped.
  CHECK_FALSE(same(snapshot(*model), initial));
  CHECK(torch::isfinite(model->linear->weight).all().item<bool>());
  CHECK(train.hooks().get<0>().inner().last_message() == check.last_message());
  CHECK_THAT(error_of<std::invalid_argument>([] { CheckInvalidLoss{{.interval = 0}}; }),
             Contains("CheckInvalidLoss: interval must be >= 1, got 0"));
}

// ---------------------------------------------------------------------------------------
// LRWarmup

namespace {
struct WarmupRun {
  Regressor model;
  torch::optim::SGD sgd;
  StepLR schedule;
  std::vector<double>* lrs;
  TrainingEpochRunner<LRWarmup, UpdateProbe> train;
  Trainer<Regressor, TrainingEpochRunner<LRWarmup, UpdateProbe>, no_validation> trainer;
  WarmupRun(std::int64_t epochs, std::vector<double>* seen, lr_warmup_options warmup)
      : model((torch::manual_seed(4), Regressor())),
        sgd(model->parameters(), 0.1),
        schedule(sgd, 1, 0.5),
        lrs(seen),
        train(sgd, {}, LRWarmup{warmup}, UpdateProbe{nullptr, seen}),
        trainer(model, train, no_validation{},
                trainer_options{.epochs = epochs, .scheduler = &schedule}) {}
};
}  // namespace

TEST_CASE(
    "LRWarmup: a linear warm-up by iteration, handed over to the epoch scheduler, exact on resume",
    "[hooks][lr_warmup]") {
  auto data = regression_data(3, 4);
  const lr_warmup_options warmup{.warmup_iters = 4, .start_factor = 0.25};
  std::vector<double> lrs;
  WarmupRun straight(3, &lrs, warmup);
  straight.trainer.fit(data, mse);
  // Steps 0-3 scale the regular rate by 0.25 + 0.75 t / 4; StepLR halves it every epoch.
  const std::vector<double> expected{
      0.1 * 0.25,    0.1 * 0.4375, 0.1 * 0.625,  // epoch 0 (regular 0.1)
      0.05 * 0.8125, 0.05,         0.05,         // epoch 1 (0.05): step 3, then 1
      0.025,         0.025,        0.025};       // epoch 2
  REQUIRE(lrs.size() == expected.size());
  for (std::size_t i = 0; i < lrs.size(); ++i) CHECK(lrs[i] == Approx(expected[i]).epsilon(1e-12));
  CHECK(straight.sgd.param_groups()[0].options().get_lr() ==
        Approx(0.0125));  // no warm rate left behind

  // One epoch, a checkpoint, a fresh run that loads it.
  temp_dir dir;
  std::vector<double> first_lrs, resumed_lrs;
  WarmupRun first(1, &first_lrs, warmup);
  first.trainer.fit(data, mse);
  CHECK(first.sgd.param_groups()[0].options().get_lr() == Approx(0.05));  // regular, as saved
  first.trainer.save_checkpoint(dir.path / "warm.ckpt");
  WarmupRun resumed(3, &resumed_lrs, warmup);
  resumed.trainer.load_checkpoint(dir.path / "warm.ckpt");
  resumed.trainer.fit(data, mse);
  REQUIRE(resumed_lrs.size() == 6);
  for (std::size_t i = 0; i < 6; ++i)
    CHECK(resumed_lrs[i] == Approx(expected[i + 3]).epsilon(1e-12));
  CHECK(same(snapshot(*resumed.model), snapshot(*straight.model)));
}

TEST_CASE("LRWarmup: constant and exponential factors, parameters checked", "[hooks][lr_warmup]") {
  LRWarmup constant{{.warmup_iters = 4, .mode = warmup_mode::constant, .start_factor = 0.25}};
  CHECK(constant.factor(0) == 0.25);
  CHECK(constant.factor(3) == 0.25);
  CHECK(constant.factor(4) == 1.0);
  LRWarmup exponential{{.warmup_iters = 4, .mode = warmup_mode::exponential, .start_factor = 0.01}};
  CHECK(exponential.factor(0) == Approx(0.01));
  CHECK(exponential.factor(2) == Approx(0.1));
  CHECK(exponential.factor(3) == Approx(std::pow(0.01, 0.25)));
  CHECK(exponential.factor(4) == 1.0);
  CHECK_THAT(error_of<std::invalid_argument>([] { LRWarmup{{.warmup_iters = 0}}; }),
             Contains("LRWarmup: warmup_iters must be >= 1, got 0"));
  CHECK_THAT(
      error_of<std::invalid_argument>([] { LRWarmup{{.warmup_iters = 5, .start_factor = 0}}; }),
      Contains("LRWarmup: start_factor must be in (0, 1], got 0"));
}

// ---------------------------------------------------------------------------------------
// EmptyCache

TEST_CASE("EmptyCache runs at the chosen points and is a no-op without CUDA",
          "[hooks][empty_cache]") {
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  EmptyCache all{{.before_epoch = true, .after_epoch = true, .after_step = true}};
  EmptyCache defaults;
  TrainingEpochRunner train(sgd, {}, hookforge::ref(all), hookforge::ref(defaults));
  train.run_epoch(model, regression_data(4, 4), 0, mse);
  CHECK(all.requests() == 1 + 4 + 1);
  CHECK(defaults.requests() == 1);  // MMEngine's default: after each epoch
  if (!torch::cuda::is_available()) CHECK(all.releases() == 0);
  CHECK_THAT(error_of<std::invalid_argument>([] { EmptyCache{{.after_epoch = false}}; }),
             Contains("EmptyCache: before_epoch, after_epoch and after_step are all false"));
}

TEST_CASE("Filters apply to built-in hooks: EmptyCache every second event",
          "[hooks][empty_cache]") {
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  TrainingEpochRunner train(sgd, {},
                            hookforge::when(EmptyCache{{.after_step = true}}, hookforge::every(2)));
  train.run_epoch(model, regression_data(5, 4), 0, mse);
  train.run_epoch(model, regression_data(5, 4), 1, mse);
  // after_step: events 1..10, runs at 2, 4, ..., 10; after_epoch: events 1, 2, runs at 2.
  CHECK(train.hooks().get<0>().inner().requests() == 5 + 1);
}

// ---------------------------------------------------------------------------------------
// HookProfiler

TEST_CASE("HookProfiler times each wrapped hook per point, the others are untouched",
          "[hooks][hook_profiler]") {
  std::ostringstream report;
  HookProfiler profiler{{.stream = &report}};
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  EMA ema{model};
  static_assert(priority_of<profiled_hook<ProgressBar>>() == priority::BELOW_NORMAL);
  static_assert(stateful<profiled_hook<ref_hook<EMA>>>);
  static_assert(state_key_of<profiled_hook<ref_hook<EMA>>>() == "EMA");
  // A pack of hooks, wrapped hook by hook into a hook_set.
  TrainingEpochRunner train(sgd, {}, profiler.wrap(IterTimer{}, hookforge::ref(ema)),
                            GradientClip{1.0});
  static_assert(std::is_same_v<decltype(profiler.wrap(hook_set(IterTimer{}, EmptyCache{}))),
                               hook_set<profiled_hook<IterTimer>, profiled_hook<EmptyCache>>>);
  train.run_epoch(model, regression_data(3, 4), 0, mse);
  CHECK(ema.steps() == 3);

  auto rows = profiler.timings();
  auto find = [&](std::string_view hook, std::string_view point) -> const hook_timing* {
    for (const auto& r : rows)
      if (r.hook == hook && r.point == point) return &r;
    return nullptr;
  };
  REQUIRE(find("IterTimer", "on_pre_step"));
  CHECK(find("IterTimer", "on_pre_step")->calls == 3);
  CHECK(find("IterTimer", "on_epoch_start")->calls == 1);
  CHECK(find("EMA", "on_post_step")->calls == 3);
  CHECK(find("EMA", "on_post_step")->method == "handle");
  CHECK(find("EMA", "on_epoch_end")->calls == 1);
  CHECK_FALSE(find("GradientClip", "on_post_backward"));
  for (std::size_t i = 1; i < rows.size(); ++i)
    CHECK(rows[i - 1].total_seconds >= rows[i].total_seconds);

  no_validation none;
  Trainer trainer(model, train, none, trainer_options{.epochs = 1}, hookforge::ref(profiler));
  trainer.fit(regression_data(2, 4), mse);
  CHECK_THAT(report.str(),
             Contains("hook profile: ") && Contains("IterTimer") && Contains("mean us"));
}

// ---------------------------------------------------------------------------------------
// Every hook as a runtime any_hook, and on the GAN runner

TEST_CASE("Each built-in hook works as a runtime any_hook", "[hooks][any_hook]") {
  auto data = regression_data(4, 4);
  auto run = [&](bool runtime) {
    torch::manual_seed(6);
    Regressor model;
    torch::optim::SGD sgd(model->parameters(), 0.1);
    std::ostringstream out;
    std::vector<double> lrs;
    auto ema = std::make_shared<EMA>(model, ema_options{.momentum = 0.5});
    auto timer = std::make_shared<IterTimer>();
    auto cache = std::make_shared<EmptyCache>(empty_cache_options{.after_step = true});
    HookProfiler profiler;
    TrainingEpochRunner train(sgd, {}, UpdateProbe{nullptr, &lrs}, runtime_hooks{});
    ValidationEpochRunner val({}, runtime_hooks{});
    if (runtime) {
      train.hooks().attach(any_hook<TrainingContext>(ProgressBar{{.refresh = 2, .stream = &out}}));
      train.hooks().attach(any_hook<TrainingContext>(GradientClip{0.5}));
      train.hooks().attach(any_hook<TrainingContext>(ema));
      train.hooks().attach(any_hook<TrainingContext>(timer));
      train.hooks().attach(any_hook<TrainingContext>(CheckInvalidLoss{{.interval = 1}}));
      train.hooks().attach(
          any_hook<TrainingContext>(LRWarmup{{.warmup_iters = 3, .start_factor = 0.5}}));
      train.hooks().attach(any_hook<TrainingContext>(cache));
      train.hooks().attach(
          any_hook<TrainingContext>(profiler.wrap(CheckInvalidLoss{{.interval = 2}})));
      val.hooks().attach(any_hook<InferenceContext>(ema));
      val.hooks().attach(any_hook<InferenceContext>(timer));
      train.run_epoch(model, data, 0, mse);
      val.run_epoch(model, data, 0, mse);
    } else {
      TrainingEpochRunner stat(
          sgd, {}, UpdateProbe{nullptr, &lrs}, ProgressBar{{.refresh = 2, .stream = &out}},
          GradientClip{0.5}, hookforge::ref(*ema), hookforge::ref(*timer),
          CheckInvalidLoss{{.interval = 1}}, LRWarmup{{.warmup_iters = 3, .start_factor = 0.5}},
          hookforge::ref(*cache), profiler.wrap(CheckInvalidLoss{{.interval = 2}}));
      ValidationEpochRunner sval({}, hookforge::ref(*ema), hookforge::ref(*timer));
      stat.run_epoch(model, data, 0, mse);
      sval.run_epoch(model, data, 0, mse);
    }
    struct outcome {
      std::vector<torch::Tensor> weights;
      torch::Tensor average;
      std::vector<double> lrs;
      std::string bar;
      std::int64_t timed, cached, profiled;
    };
    return outcome{snapshot(*model),
                   ema->averaged().at("linear.weight"),
                   lrs,
                   out.str(),
                   timer->training().iterations + timer->evaluation().iterations,
                   cache->requests(),
                   profiled_calls(profiler)};
  };
  auto s = run(false);
  auto r = run(true);
  CHECK(same(r.weights, s.weights));
  CHECK(torch::equal(r.average, s.average));
  CHECK(r.lrs == s.lrs);
  CHECK(r.lrs.front() == Approx(0.05));
  CHECK(r.timed == 8);
  CHECK(r.cached == 5);
  CHECK(r.profiled == s.profiled);
  CHECK(r.profiled > 0);
  CHECK_THAT(r.bar, Contains("train epoch 1 batch 4/4"));
  CHECK(std::count(r.bar.begin(), r.bar.end(), '\n') ==
        std::count(s.bar.begin(), s.bar.end(), '\n'));
}

TEST_CASE("The built-in hooks on the GAN runner: bar, clipping rebound to D, EMA of G, warm-up",
          "[hooks][gan]") {
  torch::manual_seed(8);
  AffineGenerator g;
  LogisticDiscriminator d;
  torch::optim::SGD g_opt(g->parameters(), 0.1), d_opt(d->parameters(), 0.1);
  std::ostringstream out;
  EMA ema{g, {.momentum = 0.5}};
  IterTimer timer;
  GANTrainingRunner runner(
      d_opt, g_opt, gan_options{.step_ratio = 2}, ProgressBar{{.refresh = 2, .stream = &out}},
      hookforge::rebind<"clip_all_grads", pts::on_post_d_backward>(GradientClip{1e-3}),
      hookforge::ref(ema), hookforge::ref(timer), CheckInvalidLoss{{.interval = 1}},
      LRWarmup{{.warmup_iters = 100, .start_factor = 0.5}});
  const auto reads = host_reads();
  runner.run_epoch(g, d, noise_batches(4), 0, d_softplus, g_softplus);
  CHECK(runner.g_steps() == 2);
  CHECK(ema.steps() == 2);  // one update per G step
  CHECK(timer.training().iterations == 4);
  // The bar reads d_loss and g_loss at batches 2 and 4; the check d_loss 4 times, g_loss twice.
  CHECK(host_reads() - reads == 4 + 6);
  CHECK_THAT(out.str(),
             Contains("train epoch 1 batch 2/4") && Contains("d_loss ") && Contains("g_loss "));
  CHECK(d_opt.param_groups()[0].options().get_lr() == Approx(0.1));  // put back at the epoch's end
}

TEST_CASE("Wrong hook parameters throw std::invalid_argument naming the hook and the parameter",
          "[hooks]") {
  CHECK_THAT(error_of<std::invalid_argument>([] { GradientClip{gradient_clip_options{}}; }),
             Contains("GradientClip: exactly one of max_norm and clip_value must be > 0"));
  CHECK_THAT(
      error_of<std::invalid_argument>([] { GradientClip{{.max_norm = 1, .clip_value = 1}}; }),
      Contains("GradientClip: exactly one of max_norm and clip_value"));
  CHECK_THAT(error_of<std::invalid_argument>([] { GradientClip{1.0, -2.0}; }),
             Contains("GradientClip: norm_type must be > 0 (or INFINITY), got -2"));
  Regressor model;
  CHECK_THAT(error_of<std::invalid_argument>([&] { EMA{model, {.momentum = 0}}; }),
             Contains("EMA: momentum must be in (0, 1], got 0"));
  CHECK_THAT(error_of<std::invalid_argument>([&] { EMA{model, {.momentum = 1.5}}; }),
             Contains("EMA: momentum must be in (0, 1]"));
  CHECK_THAT(error_of<std::invalid_argument>([&] { EMA{model, {.begin_iter = -1}}; }),
             Contains("EMA: begin_iter must be >= 0, got -1"));
}

// ---------------------------------------------------------------------------
// Custom contexts: each hook says what it needs from a context (context_lacks)

namespace {

/// A custom training runner's context: the epoch counters, a loss and an optimiser, but none
/// of TrainingContext's update counts (examples/adversarial_runner's shape).
struct CustomTrainCtx {
  std::int64_t epoch = 0, batch_idx = 0, global_step = 0, num_batches = 1, total_epochs = 1;
  torch::optim::Optimizer* optimizer = nullptr;
  torch::Tensor loss;
};

}  // namespace

TEST_CASE("Each built-in hook names the first field a context lacks, and takes one that has them",
          "[hooks][context]") {
  // The built-in contexts have what the hooks read.
  STATIC_REQUIRE(context_lacks_of<GradientClip, TrainingContext>().empty());
  STATIC_REQUIRE(context_lacks_of<GradientClip, GANContext>().empty());
  STATIC_REQUIRE(context_lacks_of<CheckInvalidLoss, TrainingContext>().empty());
  STATIC_REQUIRE(context_lacks_of<CheckInvalidLoss, GANContext>().empty());
  STATIC_REQUIRE(context_lacks_of<LRWarmup, GANContext>().empty());
  STATIC_REQUIRE(context_lacks_of<EMA, TrainingContext>().empty());
  STATIC_REQUIRE(context_lacks_of<EMA, GANContext>().empty());
  STATIC_REQUIRE(context_lacks_of<EMA, InferenceContext>().empty());
  STATIC_REQUIRE(context_lacks_of<ProgressBar, InferenceContext>().empty());
  STATIC_REQUIRE(context_lacks_of<IterTimer, InferenceContext>().empty());

  // A custom training context: the hooks that only tell training from evaluation take it;
  // those that follow the updates name the first count it lacks, through wrappers too.
  STATIC_REQUIRE(context_for<CustomTrainCtx, ProgressBar>);
  STATIC_REQUIRE(context_for<CustomTrainCtx, IterTimer>);
  STATIC_REQUIRE(context_lacks_of<EMA, CustomTrainCtx>() == "optimizer_steps");
  STATIC_REQUIRE(context_lacks_of<ref_hook<EMA>, CustomTrainCtx>() == "optimizer_steps");
  STATIC_REQUIRE(context_lacks_of<GradientClip, CustomTrainCtx>() == "optimizer_steps");
  STATIC_REQUIRE(context_lacks_of<LRWarmup, CustomTrainCtx>() == "optimizer_steps");
  STATIC_REQUIRE(context_lacks_of<IterTimer, TrainerContext>() == "batch_idx");
  STATIC_REQUIRE(context_lacks_of<CheckInvalidLoss, InferenceContext>() == "optimizer");
  STATIC_REQUIRE_FALSE(context_for<CustomTrainCtx, EMA>);

  // At run time the custom context counts as training: IterTimer's training figures and
  // ProgressBar's train label (both read `optimizer`), and no scores to show is fine.
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  CustomTrainCtx ctx{.optimizer = &sgd, .loss = torch::tensor(0.5)};
  IterTimer timer;
  timer.tick(ctx, pts::on_epoch_start{});
  timer.tick(ctx, pts::on_pre_step{});
  timer.tick(ctx, pts::on_post_step{});
  CHECK(timer.training().iterations == 1);
  CHECK(timer.evaluation().iterations == 0);

  std::ostringstream out;
  ProgressBar bar{{.stream = &out}};
  bar.start(ctx);
  bar.step(ctx);
  bar.finish(ctx);
  CHECK_THAT(out.str(), Contains("train epoch 1/1 done: 1 batches in "));
}
