// The batch fields followed at run time: a runner's batch_stages, the handlers' declared
// fields (hook_pack::field_uses), and the flow rule that the Trainer's and the config's checks
// before training share (core/runtime/field_flow.hpp).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.hpp"

using namespace fixtures;
using hookforge::batch_stage;
using names = std::vector<std::string>;

namespace {

/// A runner whose data's fields are known at run time only: it says what its batch holds where.
template <class... Hooks>
class StagedRunner {
 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_pre_step,
                                            pts::on_post_forward, pts::on_post_step>;
  using batch_stages = hookforge::batch_stages<hookforge::loaded_at<pts::on_pre_step>,
                                               hookforge::adds_at<pts::on_post_forward, "logits">,
                                               hookforge::output_at<pts::on_post_step>>;
  using Ctx = fixtures::Ctx;

  explicit StagedRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<StagedRunner, Hooks...> hooks_;
};
template <class... H>
StagedRunner(H...) -> StagedRunner<H...>;

/// Writes "sr" before the model runs.
struct Upsample {
  void up(Ctx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(up, pts::on_pre_step));
  static constexpr auto fields = hookforge::fields(hookforge::writes<"up", "sr">{});
};

/// Reads at on_post_step what its parameters say.
struct Log {
  void log(Ctx&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, pts::on_post_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"log", "sr", "output", "lr">{});
};

const hookforge::phase_data sr_data{names{"input", "target"}, names{"output"}};

}  // namespace

TEST_CASE("batch_stages_of lists the runner's points with their stage and what it adds",
          "[fields][stages]") {
  STATIC_REQUIRE(hookforge::declares_batch_stages_v<StagedRunner<>>);
  STATIC_REQUIRE_FALSE(hookforge::declares_batch_stages_v<Runner<>>);
  STATIC_REQUIRE(hookforge::batch_stages_of<Runner<>>.empty());
  constexpr auto& table = hookforge::batch_stages_of<StagedRunner<>>;
  STATIC_REQUIRE(table.size() == 4);
  CHECK(table[0].point == "on_epoch_start");
  CHECK(table[0].stage == batch_stage::none);
  CHECK(table[1].stage == batch_stage::loaded);
  CHECK(table[2].stage == batch_stage::output);
  CHECK(std::vector<std::string_view>(table[2].adds.begin(), table[2].adds.end()) ==
        std::vector<std::string_view>{"logits"});
  CHECK(table[3].stage == batch_stage::output);
  CHECK(table[3].adds.empty());
}

TEST_CASE("field_uses lists static and runtime handlers that declare fields, by point",
          "[fields][stages][runtime]") {
  StagedRunner runner{Upsample{}, Tagged<'t'>{}, hookforge::runtime_hooks{}};
  runner.hooks().attach(hookforge::any_hook<Ctx>(Log{}));
  const auto uses = runner.hooks().field_uses();
  REQUIRE(uses.size() == 2);
  CHECK(uses[0].point == "on_pre_step");
  CHECK(uses[0].hook == "Upsample");
  CHECK(uses[0].method == "up");
  CHECK(uses[0].writes == std::vector<std::string_view>{"sr"});
  CHECK(uses[1].point == "on_post_step");
  CHECK(uses[1].hook == "Log");
  CHECK(uses[1].reads == std::vector<std::string_view>{"sr", "output", "lr"});
}

TEST_CASE("the flow gives each point its stage's fields, the runner's adds and hooks' writes",
          "[fields][stages]") {
  StagedRunner runner{Upsample{}, Log{}};
  const auto uses = runner.hooks().field_uses();
  const hookforge::batch_flow flow(hookforge::batch_stages_of<decltype(runner)>, sr_data, uses);
  CHECK(flow.at("on_epoch_start") == std::nullopt);
  CHECK(flow.at("on_pre_step") == names{"input", "target", "sr"});
  CHECK(flow.at("on_post_forward") == names{"input", "target", "output", "sr", "logits"});
  CHECK(flow.at("on_post_step") == names{"input", "target", "output", "sr"});

  const auto miss = hookforge::first_missing_field(flow, uses);
  REQUIRE(miss);
  CHECK(miss->handler->method == "log");
  CHECK(miss->field == "lr");
  CHECK(miss->present == names{"input", "target", "output", "sr"});
}

TEST_CASE("what the data does not say is unverified, not missing", "[fields][stages]") {
  StagedRunner runner{Log{}};
  const auto uses = runner.hooks().field_uses();
  const auto& stages = hookforge::batch_stages_of<decltype(runner)>;

  // The model does not say: fields loaded are found, the rest cannot be checked.
  const hookforge::batch_flow no_model(stages, {names{"input", "sr"}, std::nullopt}, uses);
  const auto at = no_model.at("on_post_step");
  CHECK(at == std::nullopt);
  CHECK(no_model.verdict("sr", at) == hookforge::field_verdict::found);
  CHECK(no_model.verdict("lr", at) == hookforge::field_verdict::unverified);
  CHECK_FALSE(hookforge::first_missing_field(no_model, uses));

  // A runner that says nothing: no point carries a known batch.
  const hookforge::batch_flow unsaid({}, sr_data, uses);
  CHECK(unsaid.stage_at("on_post_step") == batch_stage::none);
  CHECK_FALSE(hookforge::first_missing_field(unsaid, uses));
}
