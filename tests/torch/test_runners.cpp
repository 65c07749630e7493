
#include <array>
#include <filesystem>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

using namespace tfx;
using namespace hookforge;

namespace {

// --- hooks that act on the loop -------------------------------------------------------------
struct SkipEveryBatch {
  void veto(TrainingContext& ctx) { ctx.skip_batch = true; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_pre_step));
};
struct VetoUpdates {
  void veto(TrainingContext& ctx) { ctx.skip_optimizer_step = true; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(veto, pts::on_post_backward));
};
struct HalveGradients {
  void halve(TrainingContext& ctx) {
    torch::NoGradGuard g;
    for (auto& p : ctx.parameters()) p.grad().mul_(0.5);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(halve, pts::on_post_backward));
};
/// Adds weight_decay * |w|^2 as an extra loss.
struct L2Penalty {
  double weight;
  void add(TrainingContext& ctx) {
    torch::Tensor sum = torch::zeros({});
    for (auto& p : ctx.parameters()) sum = sum + p.pow(2).sum();
    ctx.extra_losses["l2"] = weight * sum;
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_post_forward));
};
struct StopAfterEpoch {
  std::int64_t at;
  void check(TrainerContext& ctx) {
    if (ctx.completed_epochs == at) ctx.stop_training = true;
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(check, pts::on_trainer_epoch_finished));
};
/// Records the counters at on_post_step.
struct CounterProbe {
  std::vector<std::vector<std::int64_t>>* rows;
  void see(TrainingContext& ctx) {
    rows->push_back({ctx.epoch, ctx.batch_idx, ctx.global_step, ctx.completed_epochs,
                     ctx.total_epochs, ctx.num_batches});
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, pts::on_post_step));
};
/// Records the module's training flag and grad mode during inference.
struct ModeProbe {
  std::vector<bool>* seen;
  void look(InferenceContext& ctx) {
    seen->push_back(ctx.model->is_training());
    seen->push_back(torch::GradMode::is_enabled());
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
};
/// Records the dtype of the model's output (autocast's doing).
struct OutputDtype {
  std::vector<c10::ScalarType>* seen;
  void look(TrainingContext& ctx) { seen->push_back(ctx.entry.at("output").scalar_type()); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_forward));
};
/// Captures a grad after backward.
struct GradProbe {
  torch::Tensor* out;
  void grab(TrainingContext& ctx) { *out = ctx.parameters()[0].grad().clone(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(grab, pts::on_post_backward));
};

}  // namespace

TEST_CASE("a linear regression trained by Trainer recovers its weights", "[runners][learn]") {
  torch::manual_seed(0);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto train_data = regression_data(8, 16, 0.01, 1);
  auto val_data = regression_data(2, 16, 0.01, 2);
  TrainingEpochRunner train(sgd);  // the default options, no hooks
  ValidationEpochRunner val;
  Trainer trainer(model, train, val, trainer_options{.epochs = 20});
  auto criterion = mse;

  double start_loss = val.run_epoch(model, val_data, 0, criterion).scores.at("loss");
  auto result = trainer.fit(train_data, val_data, criterion);

  CHECK(result.completed_epochs == 20);
  CHECK(result.stop_reason == "epochs");
  CHECK(result.val_scores.at("loss") < start_loss / 100);
  auto w = model->linear->weight.detach();
  CHECK(w[0][0].item<double>() == Approx(3.0).margin(0.02));
  CHECK(w[0][1].item<double>() == Approx(-2.0).margin(0.02));
  CHECK(model->linear->bias.item<double>() == Approx(0.5).margin(0.02));
}

TEST_CASE("hooks fire in the documented order", "[runners][order]") {
  std::vector<std::string> log;
  torch::manual_seed(0);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  TrainingEpochRunner train(sgd, {}, TrainRecorder{&log});
  ValidationEpochRunner val(inference_options{}, ValRecorder{&log});
  Trainer trainer(model, train, val, trainer_options{.epochs = 2}, TrainerRecorder{&log});
  auto train_data = regression_data(3, 4);
  auto val_data = regression_data(1, 4);
  auto criterion = mse;
  trainer.fit(train_data, val_data, criterion);

  std::vector<std::string> expected{"trainer:on_training_began"};
  for (int epoch = 0; epoch < 2; ++epoch) {
    expected.push_back("train:on_epoch_start");
    for (int b = 0; b < 3; ++b)
      for (auto p : {"on_pre_step", "on_post_forward", "on_post_backward", "on_post_step"})
        expected.push_back(std::string("train:") + p);
    expected.push_back("train:on_epoch_end");
    expected.insert(expected.end(), {"val:on_epoch_start", "val:on_post_step", "val:on_epoch_end",
                                     "trainer:on_trainer_epoch_finished"});
  }
  expected.push_back("trainer:on_training_finished");
  CHECK(log == expected);
}

TEST_CASE("gradient accumulation 4 x 8 equals one step on 32", "[runners][accumulation]") {
  auto big = regression_data(1, 32, 0.1, 3);
  std::vector<Entry> small;
  for (int i = 0; i < 4; ++i)
    small.push_back(Entry{{"input", big[0].at("input").slice(0, i * 8, (i + 1) * 8)},
                          {"target", big[0].at("target").slice(0, i * 8, (i + 1) * 8)}});
  auto criterion = mse;

  torch::manual_seed(5);
  Regressor a;
  torch::manual_seed(5);
  Regressor b;
  torch::optim::SGD sa(a->parameters(), 0.1), sb(b->parameters(), 0.1);
  TrainingEpochRunner one(sa, {});
  TrainingEpochRunner accumulated(sb, training_options{.gradient_accumulation_steps = 4},
                                  StepCounter{});
  one.run_epoch(a, big, 0, criterion);
  accumulated.run_epoch(b, small, 0, criterion);
  CHECK(accumulated.hooks().get<0>().steps == 1);
  auto pa = snapshot(*a), pb = snapshot(*b);
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(torch::allclose(pa[i], pb[i], 1e-6, 1e-6));
  torch::manual_seed(5);
  Regressor untouched;
  CHECK_FALSE(same(pa, snapshot(*untouched)));
}

TEST_CASE("hooks steer the loop", "[runners][steer]") {
  auto data = regression_data(3, 8, 0.1, 4);
  auto criterion = mse;

  SECTION("skipping every batch leaves the parameters unchanged") {
    torch::manual_seed(1);
    Regressor m;
    auto before = snapshot(*m);
    torch::optim::SGD opt(m->parameters(), 0.1);
    TrainingEpochRunner runner(opt, {}, SkipEveryBatch{});
    auto r = runner.run_epoch(m, data, 0, criterion);
    CHECK(same(before, snapshot(*m)));
    CHECK(r.batches == 3);
    CHECK(r.scores.empty());
  }
  SECTION("vetoing the update leaves the parameters unchanged") {
    torch::manual_seed(1);
    Regressor m;
    auto before = snapshot(*m);
    torch::optim::SGD opt(m->parameters(), 0.1);
    TrainingEpochRunner runner(opt, {}, VetoUpdates{}, StepCounter{});
    runner.run_epoch(m, data, 0, criterion);
    CHECK(same(before, snapshot(*m)));
    CHECK(runner.hooks().get<1>().steps == 0);
  }
  SECTION("halving gradients in on_post_backward equals halving the learning rate") {
    torch::manual_seed(1);
    Regressor a;
    torch::manual_seed(1);
    Regressor b;
    torch::optim::SGD oa(a->parameters(), 0.1), ob(b->parameters(), 0.05);
    TrainingEpochRunner halved(oa, {}, HalveGradients{});
    TrainingEpochRunner plain(ob, {});
    halved.run_epoch(a, data, 0, criterion);
    plain.run_epoch(b, data, 0, criterion);
    auto pa = snapshot(*a), pb = snapshot(*b);
    for (std::size_t i = 0; i < pa.size(); ++i) CHECK(torch::allclose(pa[i], pb[i], 1e-6, 1e-7));
  }
  SECTION("an extra loss adds its gradient: d(w|w|^2)/dw = 2 w") {
    torch::manual_seed(1);
    Regressor a;
    torch::manual_seed(1);
    Regressor b;
    torch::Tensor ga, gb;
    torch::optim::SGD oa(a->parameters(), 0.0),
        ob(b->parameters(), 0.0);  // lr 0: compare first grads
    TrainingEpochRunner with(oa, {}, L2Penalty{0.5}, GradProbe{&ga});
    TrainingEpochRunner without(ob, {}, GradProbe{&gb});
    std::vector<Entry> one{data[0]};
    auto rw = with.run_epoch(a, one, 0, criterion);
    auto ro = without.run_epoch(b, one, 0, criterion);
    CHECK(torch::allclose(ga - gb, 2 * 0.5 * a->linear->weight.detach(), 1e-6, 1e-6));
    REQUIRE(rw.scores.count("l2") == 1);
    CHECK(rw.scores.at("l2") > 0);
    CHECK(rw.scores.at("loss") == Approx(ro.scores.at("loss") + rw.scores.at("l2")));
  }
  SECTION("a trainer hook can stop training") {
    torch::manual_seed(1);
    Regressor m;
    torch::optim::SGD opt(m->parameters(), 0.1);
    TrainingEpochRunner runner(opt, {});
    no_validation none;
    Trainer trainer(m, runner, none, trainer_options{.epochs = 10}, StopAfterEpoch{3});
    auto result = trainer.fit(data, criterion);
    CHECK(result.completed_epochs == 3);
    CHECK(result.stop_reason == "requested by a trainer hook");
  }
}

TEST_CASE("counters are explicit", "[runners][counters]") {
  std::vector<std::vector<std::int64_t>> rows;
  torch::manual_seed(1);
  Regressor m;
  torch::optim::SGD opt(m->parameters(), 0.1);
  TrainingEpochRunner runner(opt, {}, CounterProbe{&rows});
  no_validation none;
  Trainer trainer(m, runner, none, trainer_options{.epochs = 2});
  auto data = regression_data(3, 4);
  auto criterion = mse;
  trainer.fit(data, criterion);
  //                                       epoch batch global completed total num_batches
  std::vector<std::vector<std::int64_t>> expected{{0, 0, 0, 0, 2, 3}, {0, 1, 1, 0, 2, 3},
                                                  {0, 2, 2, 0, 2, 3}, {1, 0, 3, 1, 2, 3},
                                                  {1, 1, 4, 1, 2, 3}, {1, 2, 5, 1, 2, 3}};
  CHECK(rows == expected);
}

namespace {
/// A hook meant for the trainer.
struct EpochSummary {
  void write(TrainerContext&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(write, pts::on_trainer_epoch_finished));
};
}  // namespace

TEST_CASE("runtime hooks on a training runner: bound by name, merged with static ones",
          "[runners][runtime]") {
  std::vector<std::string> log;
  torch::manual_seed(1);
  Regressor m;
  torch::optim::SGD opt(m->parameters(), 0.1);
  TrainingEpochRunner runner(opt, {}, StepCounter{}, runtime_hooks{});
  runner.hooks().attach(any_hook<TrainingContext>(TrainRecorder{&log}));
  auto counted = std::make_shared<StepCounter>();
  runner.hooks().attach(any_hook<TrainingContext>(counted, {.key = "runtime_steps"}));

  capture_warnings warnings;
  runner.hooks().attach(any_hook<TrainingContext>(EpochSummary{}));
  REQUIRE(warnings.messages.size() == 1);
  CHECK(
      warnings.messages[0] ==
      "Hook EpochSummary declares handler method(s) (['write']) but TrainingEpochRunner exposes no "
      "matching HookPoint. Was this hook attached to the wrong target?");
  CHECK_THROWS_AS(
      runner.hooks().attach(any_hook<TrainingContext>(EpochSummary{}), {.strict = true}),
      binding_error);

  auto data = regression_data(2, 4);
  auto criterion = mse;
  runner.run_epoch(m, data, 0, criterion);
  CHECK(log.size() == 2 + 2 * 4);
  CHECK(counted->steps == 2);
  CHECK(runner.hooks().get<0>().steps == 2);
  CHECK(runner.hooks().format_table().find("StepCounter::count   [runtime]") != std::string::npos);
}

TEST_CASE("inference runners: eval mode, no gradients, criterion optional",
          "[runners][inference]") {
  std::vector<bool> seen;
  torch::manual_seed(1);
  Regressor m;
  m->train();
  auto data = regression_data(2, 4);
  auto criterion = mse;

  InferenceRunner infer(inference_options{}, ModeProbe{&seen});
  auto plain = infer.run_epoch(m, data, 0);
  CHECK(plain.scores.empty());
  CHECK(plain.batches == 2);
  CHECK(seen == std::vector<bool>{false, false, false, false});  // eval mode, grad mode off

  BenchmarkRunner bench(inference_options{});
  CHECK(bench.run_epoch(m, data, 0).scores.empty());
  auto scored = bench.run_epoch(m, data, 0, criterion);
  CHECK(scored.scores.at("loss") > 0);
  CHECK(torch::GradMode::is_enabled());  // restored after the epoch
}

TEST_CASE("score_accumulator: sample-weighted means, folded in chunks", "[runners][scores]") {
  score_accumulator acc;
  double expected_sum = 0, weight = 0;
  for (int i = 0; i < 600; ++i) {  // more than two folds
    const std::int64_t size = 1 + i % 7;
    std::map<std::string, torch::Tensor> scores{{"loss", torch::tensor(double(i))}};
    if (i % 2 == 0) scores["even"] = torch::full({3}, 2.0);  // a non-scalar score, half the batches
    acc.add(scores, size);
    expected_sum += double(i) * double(size);
    weight += double(size);
  }
  auto means = acc.means();
  CHECK(means.at("loss") == Approx(expected_sum / weight).epsilon(1e-12));
  CHECK(means.at("even") == Approx(2.0));
  CHECK(acc.means() == means);  // reading does not change the accumulator
}

TEST_CASE("mixed precision on CPU: bfloat16 autocast, no loss scaling, still learns",
          "[runners][amp]") {
  std::vector<c10::ScalarType> seen;
  torch::manual_seed(2);
  Regressor m;
  torch::optim::SGD opt(m->parameters(), 0.05);
  TrainingEpochRunner runner(opt, training_options{.mixed_precision = true}, OutputDtype{&seen});
  CHECK_FALSE(runner.scaler().is_enabled());  // loss scaling is for float16 on CUDA
  auto data = regression_data(4, 16, 0.0, 6);
  auto criterion = mse;
  double first = runner.run_epoch(m, data, 0, criterion).scores.at("loss");
  double last = first;
  for (int epoch = 1; epoch < 15; ++epoch)
    last = runner.run_epoch(m, data, epoch, criterion).scores.at("loss");
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.front() == torch::kBFloat16);
  CHECK(m->linear->weight.scalar_type() == torch::kFloat);  // parameters stay float32
  CHECK(last < first / 10);
}
