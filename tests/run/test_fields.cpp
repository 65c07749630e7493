// The batch fields a configured run follows before training (run/field_flow.hpp): options that
// name fields, defaults, hooks of one's own that declare their reads and writes, datasets
// that do not say their fields, and a model output nothing reads.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/run.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#include "run_fixture.hpp"

namespace cfg = hookforge::config;
namespace run = hookforge::run;
namespace pts = hookforge::points;
using run_tests::build;

namespace {

/// Reads "lr" after the step: a field Sine's samples lack.
struct ReadsLr {
  void look(auto&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_post_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"look", "lr">{});
};

/// Writes "lr" before the forward (as a hook that derives an input would).
struct WritesLr {
  void derive(auto&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(derive, pts::on_pre_step));
  static constexpr auto fields = hookforge::fields(hookforge::writes<"derive", "lr">{});
};

/// Reads the model's output before the model has run.
struct ReadsOutputEarly {
  void look(auto&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(look, pts::on_pre_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"look", "output">{});
};

/// Samples of one field, "input": what a loss's default target_field does not find.
struct InputsOnly {
  std::size_t size() const { return 16; }
  hookforge::Entry get(std::size_t) const { return {{"input", torch::zeros({1})}}; }
  static std::vector<std::string> field_names() { return {"input"}; }
};

/// A dataset that does not say its fields.
struct Unsaid {
  std::size_t size() const { return 16; }
  hookforge::Entry get(std::size_t) const {
    return {{"input", torch::zeros({1})}, {"target", torch::zeros({1})}};
  }
};

/// TrainingEpochRunner as a runner of one's own that does not say what its batch holds where.
template <class... Hooks>
struct UnstagedRunner : hookforge::TrainingEpochRunner<Hooks...> {
  using hookforge::TrainingEpochRunner<Hooks...>::TrainingEpochRunner;
  using batch_stages = void;  // hides the base's: no hookforge::batch_stages
};
using unstaged_runner = UnstagedRunner<hookforge::runtime_hooks>;

struct unstaged_config {
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  cfg::hook_list<unstaged_runner> hooks;
};

class UnstagedComponent final : public run::TrainingRunner {
 public:
  explicit UnstagedComponent(unstaged_config c)
      : optimizer_(std::move(c.optimizer)),
        runner_(*optimizer_, hookforge::training_options{}, hookforge::runtime_hooks{}) {
    cfg::attach_all(runner_.hooks(), c.hooks);
  }
  std::string_view name() const override { return "UnstagedRunner"; }
  std::unique_ptr<run::session> make_session(const run::session_inputs& in) override {
    return run::make_trainer_session(run::single_model{in.model}, runner_, in,
                                     run::loss_fn{in.loss});
  }

 private:
  std::shared_ptr<torch::optim::Optimizer> optimizer_;
  unstaged_runner runner_;
};

}  // namespace

HOOKFORGE_REGISTER_AS(training_runner, "UnstagedRunner", UnstagedComponent,
                      cfg::options<unstaged_config>(
                          cfg::field("optimizer", &unstaged_config::optimizer, cfg::required),
                          cfg::field("hooks", &unstaged_config::hooks)));
HOOKFORGE_REGISTER(runner_hook, ReadsLr);
HOOKFORGE_REGISTER(runner_hook, WritesLr);
HOOKFORGE_REGISTER(runner_hook, ReadsOutputEarly);
HOOKFORGE_REGISTER_AS(dataset, "InputsOnly", run::dataset_of<InputsOnly>);
HOOKFORGE_REGISTER_AS(dataset, "Unsaid", run::dataset_of<Unsaid>);

namespace {

/// The run of `sets` built and checked as hookforge-run checks it: the field report, or the
/// config_error's message (in `error`).
struct checked {
  run::field_report report;
  std::string bindings;  ///< the binding tables, as --check prints them
  std::string error;
};
checked check(const std::vector<std::string>& sets, bool strict = false) {
  checked out;
  try {
    auto r = build(sets, strict);
    r.trainer->check_built_run(*r.b, strict);
    out.report = r.trainer->batch_fields();
    out.bindings = r.trainer->format_bindings();
  } catch (const cfg::config_error& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace

TEST_CASE("the base run's fields are followed through both phases", "[run][fields]") {
  const auto c = check({});
  REQUIRE(c.error.empty());
  REQUIRE(c.report.phases.size() == 2);
  CHECK(c.report.phases[0].name == "training");
  CHECK(*c.report.phases[0].loaded == std::vector<std::string>{"input", "target"});
  CHECK(*c.report.phases[0].added == std::vector<std::string>{"output"});
  // MLP's input_field and MSE's two fields, in each phase
  CHECK(c.report.checked == 6);
  CHECK(c.report.unverified.empty());
  CHECK(c.report.format().find("training:   input, target + the model's output") !=
        std::string::npos);
  // The fields at each point that carries a batch, by the runner's batch_stages.
  using at_point = std::pair<std::string, std::vector<std::string>>;
  const std::vector<std::string> with_output{"input", "target", "output"};
  CHECK(c.report.phases[0].at_points == std::vector<at_point>{{"on_pre_step", {"input", "target"}},
                                                              {"on_post_forward", with_output},
                                                              {"on_post_backward", with_output},
                                                              {"on_post_step", with_output}});
  CHECK(c.report.phases[1].at_points == std::vector<at_point>{{"on_post_step", with_output}});
  CHECK_THAT(c.report.format(), Catch::Contains("    on_pre_step                input, target\n"));
}

TEST_CASE("a metric's misspelled field is an error at its key, with the closest names",
          "[run][fields]") {
  const auto c =
      check({"validation_runner.params.metrics=[{_target: MAE, params: {target_field: "
             "traget}}]"});
  CHECK_THAT(c.error, Catch::Contains("validation_runner.params.metrics[0].params.target_field: "
                                      "expected a field the validation batch has at this point "
                                      "(input, target, output), got 'traget' (closest: target)"));
}

TEST_CASE("a default the config leaves out is checked at its entry", "[run][fields]") {
  const auto c = check({"data.train={_target: InputsOnly}"});
  CHECK_THAT(c.error, Catch::Contains("trainer.params.loss.params.target_field: expected a field "
                                      "the training batch has at this point (input, output), got "
                                      "'target' (its default: the entry leaves it out)"));
}

TEST_CASE("a hook of one's own that reads a missing field fails before training", "[run][fields]") {
  const auto c = check({"training_runner.params.hooks=[{_target: ReadsLr}]"});
  CHECK_THAT(c.error, Catch::Contains("training_runner.params.hooks[0]: expected a field the "
                                      "training batch has at on_post_step (input, target, "
                                      "output), got 'lr', which ReadsLr::look reads"));
  // Shared with the validation runner, it is checked there as well.
  const auto v = check({"validation_runner.params.hooks=[{_target: ReadsLr}]"});
  CHECK_THAT(v.error, Catch::Contains("the validation batch has at on_post_step"));
}

TEST_CASE("a field a hook writes earlier is there, at a point without a batch nothing is read",
          "[run][fields]") {
  const auto both =
      check({"training_runner.params.hooks=[{_target: WritesLr}, {_target: ReadsLr}]"});
  CHECK(both.error.empty());
  // --check's tables show what each handler reads and writes
  CHECK_THAT(both.bindings, Catch::Contains("WritesLr::derive   writes lr   [runtime]"));
  CHECK_THAT(both.bindings, Catch::Contains("ReadsLr::look   reads lr   [runtime]"));
  CHECK(check({"training_runner.params.hooks=[{_target: ReadsLr, bindings: {look: on_epoch_end}}]"})
            .error.empty());
  // The model's output does not exist before the forward.
  CHECK_THAT(check({"training_runner.params.hooks=[{_target: ReadsOutputEarly}]"}).error,
             Catch::Contains("at on_pre_step (input, target), got 'output', which "
                             "ReadsOutputEarly::look reads"));
}

TEST_CASE("what a dataset does not say is listed as not verified, not guessed", "[run][fields]") {
  const auto c =
      check({"data.train={_target: Unsaid}", "training_runner.params.hooks=[{_target: ReadsLr}]"});
  REQUIRE(c.error.empty());
  CHECK_FALSE(c.report.phases[0].loaded.has_value());
  REQUIRE(c.report.unverified.size() == 4);  // MLP's input, MSE's two, ReadsLr's lr
  CHECK_THAT(c.report.unverified,
             Catch::VectorContains(std::string("training_runner.params.hooks[0]: 'lr' (the "
                                               "training dataset does not say its fields)")));
}

TEST_CASE("a model output nothing reads warns, and is an error when strict", "[run][fields]") {
  const std::vector<std::string> sets{
      "trainer.params.loss={_target: MSE, params: {output_field: input}}"};
  std::vector<std::string> warnings;
  auto previous =
      hookforge::set_warning_sink([&](std::string_view text) { warnings.emplace_back(text); });
  const auto c = check(sets);
  hookforge::set_warning_sink(std::move(previous));
  REQUIRE(c.error.empty());
  CHECK(warnings == std::vector<std::string>{
                        "the model's output 'output' is read by nothing in training that says "
                        "what it reads",
                        "the model's output 'output' is read by nothing in validation that says "
                        "what it reads"});
  CHECK_THAT(check(sets, /*strict=*/true).error,
             Catch::Contains("trainer.params.model: expected a model each of whose outputs the "
                             "run reads (--strict), got its output 'output', which nothing in "
                             "training reads"));
}

TEST_CASE("a runner that does not say its batch stages has its hooks' reads not verified",
          "[run][fields]") {
  const auto c = check({"training_runner._target=UnstagedRunner",
                        "training_runner.params.hooks=[{_target: ReadsLr}]"});
  REQUIRE(c.error.empty());
  CHECK(c.report.phases[0].at_points.empty());
  CHECK(c.report.unverified ==
        std::vector<std::string>{"training_runner.params.hooks[0]: 'lr' (UnstagedRunner does not "
                                 "say what its batch holds where)"});
}
