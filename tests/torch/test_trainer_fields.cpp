// fit()'s check before training: the batch fields the runners' hooks read are in the batch the
// loaders' datasets and the model make, point by point (torch/runners/trainer_fields.hpp).
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "file_testing.hpp"

#include <catch2/catch.hpp>

using namespace tfx;
using namespace hookforge;

namespace {

/// Reads "lr" at on_post_step; counts its calls.
struct ReadsLr {
  int* calls;
  void look(TrainingContext&) { ++*calls; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"look", "lr">{});
};

/// Writes "lr" before the model runs.
struct WritesLr {
  void put(TrainingContext& ctx) { ctx.entry.set("lr", torch::zeros_like(ctx.entry.at("target"))); }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(put, pts::on_pre_step));
  static constexpr auto fields = hookforge::fields(hookforge::writes<"put", "lr">{});
};

/// Reads the model's output before the model has run.
struct EarlyOutput {
  void peek(TrainingContext&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(peek, pts::on_pre_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"peek", "output">{});
};

/// Reads a misspelled target in validation.
struct ValTypo {
  void look(InferenceContext&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"look", "output", "targte">{});
};

/// Counts the epochs begun: none when fit() refuses before training.
struct Began {
  int* count;
  void began(TrainerContext&) { ++*count; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(began, pts::on_training_began));
};

auto sine_loader() { return DataLoader(SineRegression({.count = 16}), {.batch_size = 8}); }

}  // namespace

TEST_CASE("fit() refuses a hook reading a field the batch lacks, before training",
          "[trainer][fields]") {
  torch::manual_seed(1);
  Regressor model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  int looks = 0, began = 0;
  TrainingEpochRunner train(sgd, {}, ReadsLr{&looks});
  no_validation none;
  Trainer trainer(model, train, none, trainer_options{}, Began{&began});
  auto loader = sine_loader();
  CHECK(error_of<std::invalid_argument>([&] { trainer.fit(loader, mse); }) ==
        "Trainer: ReadsLr::look reads the batch field 'lr' at on_post_step of TrainingEpochRunner, "
        "which the training batch does not have there (fields: input, target, output). Provide "
        "it (the dataset, the model or an earlier hook's writes<>) or bind the handler later");
  CHECK(began == 0);
  CHECK(looks == 0);
  CHECK(trainer.completed_epochs() == 0);
}

TEST_CASE("fit() follows the fields a hook writes and the model's output, by point",
          "[trainer][fields]") {
  torch::manual_seed(1);
  Regressor model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  auto loader = sine_loader();
  no_validation none;

  SECTION("a field written before the model runs is there after it") {
    int looks = 0;
    TrainingEpochRunner train(sgd, {}, WritesLr{}, ReadsLr{&looks});
    Trainer trainer(model, train, none, trainer_options{});
    trainer.fit(loader, mse);
    CHECK(looks == 2);
  }
  SECTION("the model's output is not there before the model runs") {
    TrainingEpochRunner train(sgd, {}, EarlyOutput{});
    Trainer trainer(model, train, none, trainer_options{});
    const auto error = error_of<std::invalid_argument>([&] { trainer.fit(loader, mse); });
    CHECK_THAT(error, Catch::StartsWith("Trainer: EarlyOutput::peek reads the batch field "
                                        "'output' at on_pre_step of TrainingEpochRunner, which "
                                        "the training batch does not have there (fields: input, "
                                        "target)"));
  }
  SECTION("data that does not say its fields is not checked") {
    Regressor two_inputs;
    torch::optim::SGD two_sgd(two_inputs->parameters(), 0.1);
    int looks = 0;
    TrainingEpochRunner train(two_sgd, {}, ReadsLr{&looks});
    Trainer trainer(two_inputs, train, none, trainer_options{});
    trainer.fit(regression_data(2, 4), mse);  // a vector of Entries: no dataset to ask
    CHECK(looks == 2);
  }
}

TEST_CASE("fit() checks the validation runner's hooks against the validation batch",
          "[trainer][fields]") {
  torch::manual_seed(1);
  Regressor model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd, {});
  ValidationEpochRunner<ValTypo> val(inference_options{}, ValTypo{});
  Trainer trainer(model, train, val, trainer_options{});
  auto train_loader = sine_loader();
  auto val_loader = sine_loader();
  CHECK(error_of<std::invalid_argument>([&] { trainer.fit(train_loader, val_loader, mse); }) ==
        "Trainer: ValTypo::look reads the batch field 'targte' at on_post_step of "
        "ValidationEpochRunner, which the validation batch does not have there (fields: input, "
        "target, output); closest: target. Provide it (the dataset, the model or an earlier "
        "hook's writes<>) or bind the handler later");
}

TEST_CASE("a config-loaded hook is checked as a static one", "[trainer][fields][runtime]") {
  torch::manual_seed(1);
  Regressor model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  int looks = 0;
  TrainingEpochRunner train(sgd, {}, runtime_hooks{});
  train.hooks().attach(any_hook<TrainingContext>(ReadsLr{&looks}));
  no_validation none;
  Trainer trainer(model, train, none, trainer_options{});
  auto loader = sine_loader();
  CHECK_THAT(error_of<std::invalid_argument>([&] { trainer.fit(loader, mse); }),
             Catch::StartsWith("Trainer: ReadsLr::look reads the batch field 'lr'"));
  CHECK(looks == 0);
}

TEST_CASE("the GAN runner's batch holds what each phase's forward adds", "[gan][fields]") {
  const phase_data data{std::vector<std::string>{"input", "target"},
                        std::vector<std::string>{"output"}};
  const batch_flow flow(batch_stages_of<GANTrainingRunner<>>, data, {});
  using names = std::vector<std::string>;
  CHECK(flow.at("on_pre_d_forward") == names{"input", "target"});
  CHECK(flow.at("on_post_d_forward") ==
        names{"input", "target", "output", "fake", "d_real", "d_fake"});
  CHECK(flow.at("on_pre_g_forward") == names{"input", "target"});
  CHECK(flow.at("on_post_g_backward") ==
        names{"input", "target", "output", "fake", "d_fake_for_g"});
  CHECK(flow.at("on_post_step") == names{"input", "target", "output"});
  CHECK(flow.at("on_epoch_end") == std::nullopt);
}

namespace {
/// A runner of one's own that does not say what its batch holds where.
template <class... Hooks>
class UnsaidRunner : public training_runner_base<UnsaidRunner<Hooks...>, Hooks...> {
  using base = training_runner_base<UnsaidRunner, Hooks...>;

 public:
  using hook_points = point_list<pts::on_epoch_start, pts::on_post_step, pts::on_epoch_end>;
  using Ctx = TrainingContext;
  UnsaidRunner(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : base(optimizer, std::move(hooks)...) {}
  template <class Model, class Loader, class C>
  epoch_result run_epoch(Model&, Loader&& loader, std::int64_t epoch, C&&) {
    Ctx ctx;
    this->start_epoch(ctx, epoch, loader);
    const auto batches = this->training_batches(ctx, loader, [&](Entry&& batch, bool) {
      ctx.entry = std::move(batch);
      this->hooks_.template fire<pts::on_post_step>(ctx);
    });
    return this->finish_epoch(ctx, batches);
  }
};
}  // namespace

TEST_CASE("a runner that does not say its batch stages is warned of, not checked",
          "[trainer][fields]") {
  torch::manual_seed(1);
  Regressor model(1, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  int looks = 0;
  UnsaidRunner<ReadsLr> train(sgd, ReadsLr{&looks});
  no_validation none;
  Trainer trainer(model, train, none, trainer_options{});
  std::vector<std::string> warnings;
  auto previous = set_warning_sink([&](std::string_view text) { warnings.emplace_back(text); });
  auto loader = sine_loader();
  trainer.fit(loader, mse);
  set_warning_sink(std::move(previous));
  CHECK(looks == 2);
  CHECK(warnings == std::vector<std::string>{
                        "Trainer: UnsaidRunner does not say what its batch holds where "
                        "(batch_stages, docs/concepts.md), so the batch fields its hooks read are "
                        "not checked before training"});
}
