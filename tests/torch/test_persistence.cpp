// Tests for hookforge/torch/io/persistence.hpp and the trainer's all-or-nothing loading.
#include <any>
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "file_testing.hpp"

#include <catch2/catch.hpp>

using namespace tfx;
using namespace hookforge;

namespace {

std::filesystem::path temp_file(const std::string& name) {
  static tfx::temp_dir dir("hookforge-test-persist");  // this process's, removed at exit
  return dir.path / (name + ".ckpt");
}

/// Counts the batches it saw (a runtime hook's state).
struct BatchTally {
  std::int64_t batches = 0;
  void count(TrainingContext&) { ++batches; }
  hookforge::state_map state_dict() const { return {{"batches", batches}}; }
  void load_state_dict(const hookforge::state_map& s) { batches = s.at("batches").toInt(); }
  static constexpr std::string_view state_key = "tally";
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

/// A trainer-level stateful hook: the sum of training losses seen.
struct LossSum {
  double sum = 0;
  void add(TrainerContext& ctx) { sum += ctx.train_scores.at("loss"); }
  hookforge::state_map state_dict() const { return {{"sum", sum}}; }
  void load_state_dict(const hookforge::state_map& s) { sum = s.at("sum").toDouble(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_trainer_epoch_finished));
};

/// Counts its calls; wrapped in an every(2) filter, so its filter has counts too.
struct Calls {
  std::int64_t* calls;
  void call(TrainingContext&) { ++*calls; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(call, pts::on_post_step));
};

using Runner = TrainingEpochRunner<StepCounter, filtered_hook<Calls>, runtime_hooks>;

Runner make_runner(torch::optim::Optimizer& optimizer, std::int64_t* calls) {
  Runner runner(optimizer, {}, StepCounter{}, hookforge::when(Calls{calls}, hookforge::every(2)),
                runtime_hooks{});
  runner.hooks().attach(any_hook<TrainingContext>(BatchTally{}));
  return runner;
}

}  // namespace

TEST_CASE("a runner without a trainer is checkpointed by save_component / load_component",
          "[persistence][checkpoint]") {
  auto path = temp_file("component");
  auto data = regression_data(3, 4);
  std::int64_t calls = 0, calls_resumed = 0;
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  auto runner = make_runner(sgd, &calls);
  runner.run_epoch(model, data, 0, mse);
  {
    checkpoint_writer out;
    save_component(out, "training_runner", runner);
    out.save(path);
    checkpoint_reader in(path);
    CHECK(in.contains("training_runner"));
    CHECK(in.contains("hooks.training_runner." + std::string(state_key_of<StepCounter>())));
    CHECK(
        in.contains("events.training_runner." + std::string(state_key_of<filtered_hook<Calls>>())));
    CHECK(in.contains("hooks.training_runner.tally"));
  }

  auto resumed = make_runner(sgd, &calls_resumed);
  load_component(checkpoint_reader(path), "training_runner", resumed);
  CHECK(resumed.global_step() == 3);
  CHECK(resumed.hooks().get<0>().steps == 3);
  CHECK(resumed.hooks().get<1>().event_counts() == runner.hooks().get<1>().event_counts());
  // Batches 3, 4, 5 of the run: the every(2) filter fires at 3 and 5 (1-based 4 and 6).
  resumed.run_epoch(model, data, 1, mse);
  runner.run_epoch(model, data, 1, mse);
  CHECK(calls_resumed == calls - 1);  // the first run's epoch 0 fired once more
  auto tally = [](Runner& r) {
    const auto& s = r.hooks().runtime().states()[0];
    return std::any_cast<state_map>(s.save(s.object)).at("batches").toInt();
  };
  CHECK(tally(resumed) == 6);
  CHECK(tally(runner) == 6);
  std::filesystem::remove(path);
}

TEST_CASE("load_component reads every section before it changes anything",
          "[persistence][checkpoint]") {
  auto path = temp_file("partial");
  auto data = regression_data(2, 4);
  std::int64_t calls = 0;
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  auto runner = make_runner(sgd, &calls);
  runner.run_epoch(model, data, 0, mse);

  TrainingEpochRunner<StepCounter> other(sgd, {},
                                         StepCounter{});  // saves no tally, no filter counts
  other.run_epoch(model, regression_data(5, 4), 0, mse);
  checkpoint_writer out;
  save_component(out, "training_runner", other);
  out.save(path);

  CHECK_THROWS_WITH(load_component(checkpoint_reader(path), "training_runner", runner),
                    Catch::Contains(path.string()) && Catch::Contains("events.training_runner."));
  CHECK(runner.global_step() == 2);
  CHECK(runner.hooks().get<0>().steps == 2);
  std::filesystem::remove(path);
}

namespace {

struct TrainerState {
  std::vector<torch::Tensor> params, momenta;
  std::int64_t completed_epochs, global_step, steps;
  double loss_sum;
};

template <class T>
TrainerState state_of(Regressor& model, torch::optim::SGD& sgd, T& trainer,
                      TrainingEpochRunner<StepCounter>& train) {
  TrainerState s{snapshot(*model),
                 {},
                 trainer.completed_epochs(),
                 train.global_step(),
                 train.hooks().template get<0>().steps,
                 trainer.hooks().template get<0>().sum};
  for (auto& p : model->parameters()) {
    auto& state = sgd.state().at(hookforge::compat::optimizer_state_key(p));
    s.momenta.push_back(
        static_cast<torch::optim::SGDParamState&>(*state).momentum_buffer().clone());
  }
  return s;
}

void check_same(const TrainerState& a, const TrainerState& b) {
  CHECK(same(a.params, b.params));
  CHECK(same(a.momenta, b.momenta));
  CHECK(a.completed_epochs == b.completed_epochs);
  CHECK(a.global_step == b.global_step);
  CHECK(a.steps == b.steps);
  CHECK(a.loss_sum == b.loss_sum);
}

}  // namespace

TEST_CASE("a failed load_checkpoint leaves the trainer as it was",
          "[trainer][checkpoint][persistence]") {
  auto path = temp_file("failed");
  auto data = regression_data(3, 4);

  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  StepLR scheduler(sgd, 1, 0.5);
  TrainingEpochRunner train(sgd, {}, StepCounter{});
  Trainer trainer(model, train, no_validation{},
                  trainer_options{.epochs = 2, .scheduler = &scheduler}, LossSum{});
  trainer.fit(data, mse);
  const auto before = state_of(model, sgd, trainer, train);
  const double lr = sgd.param_groups()[0].options().get_lr();

  SECTION("an Adam checkpoint into an SGD trainer") {
    torch::manual_seed(2);
    Regressor other;
    torch::optim::Adam adam(other->parameters(), 0.01);
    StepLR other_scheduler(adam, 1, 0.1);
    TrainingEpochRunner other_train(adam, {}, StepCounter{});
    Trainer other_trainer(other, other_train, no_validation{},
                          trainer_options{.epochs = 3, .scheduler = &other_scheduler}, LossSum{});
    other_trainer.fit(data, mse);
    other_trainer.save_checkpoint(path);

    CHECK_THROWS_WITH(trainer.load_checkpoint(path), Catch::Contains(path.string()) &&
                                                         Catch::Contains("'optimizer'") &&
                                                         Catch::Contains("Adam"));
  }
  SECTION("a checkpoint missing a hook section") {
    torch::manual_seed(2);
    Regressor other;
    torch::optim::SGD other_sgd(other->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    StepLR other_scheduler(other_sgd, 1, 0.1);
    TrainingEpochRunner other_train(other_sgd, {});  // no StepCounter: no hook section
    Trainer other_trainer(other, other_train, no_validation{},
                          trainer_options{.epochs = 3, .scheduler = &other_scheduler}, LossSum{});
    other_trainer.fit(data, mse);
    other_trainer.save_checkpoint(path);

    CHECK_THROWS_WITH(trainer.load_checkpoint(path),
                      Catch::Contains(path.string()) && Catch::Contains("hooks.training_runner."));
  }
  check_same(before, state_of(model, sgd, trainer, train));
  CHECK(sgd.param_groups()[0].options().get_lr() == lr);
  CHECK(scheduler.last_lr() == std::vector<double>{lr});
  std::filesystem::remove(path);
}

TEST_CASE("a trainer section without completed_epochs names the file and the section",
          "[trainer][checkpoint][persistence]") {
  auto path = temp_file("no-epochs");
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd, {});
  checkpoint_writer out;
  out.add_module("model", model)
      .add_optimizer("optimizer", sgd)
      .add_state("trainer", {})
      .add_state("training_runner", train.state_dict())
      .add_state("extra", {})
      .add_rng();
  out.save(path);

  Trainer trainer(model, train, no_validation{}, trainer_options{});
  CHECK_THROWS_AS(trainer.load_checkpoint(path), checkpoint_error);
  CHECK_THROWS_WITH(trainer.load_checkpoint(path), Catch::Contains(path.string()) &&
                                                       Catch::Contains("section 'trainer'") &&
                                                       Catch::Contains("completed_epochs"));
  std::filesystem::remove(path);
}

TEST_CASE("fit takes temporaries: no_validation{}, inline lambda criteria, loaders",
          "[trainer][fit]") {
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd, {});

  SECTION("without validation") {
    Trainer trainer(model, train, no_validation{}, trainer_options{.epochs = 2});
    auto result = trainer.fit(regression_data(2, 4), [](const Entry& e) { return mse(e); });
    CHECK(result.completed_epochs == 2);
    CHECK(train.global_step() == 4);
  }
  SECTION("with validation") {
    ValidationEpochRunner val(inference_options{});
    Trainer trainer(model, train, val, trainer_options{.epochs = 1});
    auto result = trainer.fit(regression_data(2, 4), regression_data(1, 4), [](const Entry& e) {
      return loss_terms{{"mse", mse(e)}, {"l1", torch::l1_loss(e.at("output"), e.at("target"))}};
    });
    CHECK(result.val_scores.count("l1") == 1);
  }
}

TEST_CASE("fit_result keeps every epoch's history", "[trainer][fit]") {
  auto data = regression_data(2, 4);
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  StepLR scheduler(sgd, 1, 0.5);
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val,
                  trainer_options{.epochs = 3, .val_interval = 2, .scheduler = &scheduler});
  auto result = trainer.fit(data, data, mse);

  REQUIRE(result.history.size() == 3);
  for (std::int64_t i = 0; i < 3; ++i) {
    const auto& h = result.history[static_cast<std::size_t>(i)];
    CHECK(h.epoch == i);
    CHECK(h.train_scores.count("loss") == 1);
    CHECK(h.learning_rates == std::vector<double>{0.1 / double(1 << i)});
    CHECK(h.seconds >= 0);
    CHECK(h.validated == (i == 1));
    CHECK(h.val_scores.empty() == (i != 1));
  }
  CHECK(result.history[0].train_scores.at("loss") != result.history[2].train_scores.at("loss"));
  CHECK(result.history[2].train_scores == result.train_scores);
  CHECK(result.history[1].val_scores == result.val_scores);

  // A second fit() after more epochs are planned continues the numbering.
  auto more = Trainer(model, train, val, trainer_options{.epochs = 4, .val_interval = 2});
  more.load_state_dict(trainer.state_dict());
  auto rest = more.fit(data, data, mse);
  REQUIRE(rest.history.size() == 1);
  CHECK(rest.history[0].epoch == 3);
  CHECK(rest.history[0].validated);
}

TEST_CASE("state_value reads each kind of entry, and names owner, key and what is there",
          "[persistence][state]") {
  const hookforge::state_map state{{"n", c10::IValue(std::int64_t{3})},
                                   {"x", c10::IValue(0.5)},
                                   {"on", c10::IValue(true)},
                                   {"name", c10::IValue(std::string("best"))},
                                   {"ids", c10::IValue(std::vector<std::int64_t>{1, 2})},
                                   {"lrs", c10::IValue(std::vector<double>{0.1, 0.2})},
                                   {"files", c10::IValue(hookforge::string_list({"a", "b"}))},
                                   {"t", c10::IValue(torch::ones({2}))}};
  CHECK(hookforge::state_value<std::int64_t>(state, "Owner", "n") == 3);
  CHECK(hookforge::state_value<double>(state, "Owner", "x") == 0.5);
  CHECK(hookforge::state_value<double>(state, "Owner", "n") == 3.0);  // an integer converts
  CHECK(hookforge::state_value<bool>(state, "Owner", "on"));
  CHECK(hookforge::state_value<std::string>(state, "Owner", "name") == "best");
  CHECK(hookforge::state_value<std::vector<std::int64_t>>(state, "Owner", "ids") ==
        std::vector<std::int64_t>{1, 2});
  CHECK(hookforge::state_value<std::vector<double>>(state, "Owner", "lrs") ==
        std::vector<double>{0.1, 0.2});
  CHECK(hookforge::state_value<std::vector<std::string>>(state, "Owner", "files") ==
        std::vector<std::string>{"a", "b"});
  CHECK(torch::equal(hookforge::state_value<torch::Tensor>(state, "Owner", "t"), torch::ones({2})));
  CHECK(hookforge::state_value(state, "Owner", "x").toDouble() == 0.5);

  CHECK_THROWS_WITH(hookforge::state_value<double>(state, "Owner", "y"),
                    "Owner: the saved state has no 'y' (it has: 'files', 'ids', 'lrs', 'n', "
                    "'name', 'on', 't', 'x')");
  CHECK_THROWS_WITH(hookforge::state_value<std::int64_t>(state, "Owner", "x"),
                    "Owner: the saved state's 'x' is a Double, expected an integer");
  CHECK_THROWS_WITH(hookforge::state_value<std::string>(state, "", "t"),
                    "the saved state's 't' is a Tensor, expected a string");
  CHECK_THROWS_WITH(hookforge::state_value<double>({}, "Owner", "y"),
                    "Owner: the saved state has no 'y' (it is empty)");
  hookforge::state_map many;
  for (int i = 0; i < 12; ++i) many["k" + std::to_string(i)] = c10::IValue(std::int64_t{i});
  CHECK_THROWS_WITH(hookforge::state_value<double>(many, "Owner", "y"),
                    Catch::EndsWith(", ... (12 in all))"));
}
