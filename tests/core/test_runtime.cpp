#include <catch2/catch.hpp>

#include "fixtures.hpp"

using namespace fixtures;
using namespace hookforge::priority;
using hookforge::any_hook;

namespace {
struct Misplaced {
  void flush_epoch_metrics(Ctx&) {}
  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(flush_epoch_metrics, pts::on_trainer_epoch_finished));
};
struct OtherCtx {};
struct Wrong {
  void run(OtherCtx&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(run, pts::on_post_step));
};
}  // namespace

TEST_CASE("runtime hooks bind by point name and fire", "[runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  runner.hooks().attach(any_hook<Ctx>(MultiTarget{}));
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  runner.fire<on_pre_attack>(ctx);
  runner.fire<pts::on_epoch_start>(ctx);
  CHECK(ctx.counter == 2);
}

TEST_CASE("a runtime hook that matches nothing warns with SR-Forge's text", "[runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  hookforge::capture_warnings warnings;
  runner.hooks().attach(any_hook<Ctx>(Misplaced{}));
  REQUIRE(warnings.messages.size() == 1);
  CHECK(
      warnings.messages[0] ==
      "Hook Misplaced declares handler method(s) (['flush_epoch_metrics']) but TestRunner exposes "
      "no matching HookPoint. Was this hook attached to the wrong target?");
}

TEST_CASE("strict mode turns the warning into an error", "[runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  hookforge::hook_options options;
  options.bindings["count"] = {"on_post_stpe"};  // misspelled in a config
  CHECK_THROWS_AS(runner.hooks().attach(any_hook<Ctx>(MultiTarget{}, options), {.strict = true}),
                  hookforge::binding_error);
}

TEST_CASE("a bindings map remaps or disables handlers by name", "[runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  hookforge::hook_options options;
  options.bindings["start"] = {"on_pre_attack"};
  options.bindings["step"] = {};  // disabled
  runner.hooks().attach(any_hook<Ctx>(TwoHandlers{}, options));
  Ctx ctx;
  runner.fire<pts::on_epoch_start>(ctx);
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log.empty());
  runner.fire<on_pre_attack>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"start"});

  hookforge::hook_options wrong;
  wrong.bindings["stpe"] = {"on_post_step"};
  CHECK_THROWS_WITH(any_hook<Ctx>(TwoHandlers{}, wrong),
                    Catch::Contains("has no handler 'stpe' (its handlers: start, step)"));
}

TEST_CASE("runtime and static hooks are ordered together by priority", "[runtime]") {
  Runner runner{Tagged<'a', HIGH>{}, Tagged<'c'>{}, hookforge::runtime_hooks{}, Tagged<'e'>{},
                Tagged<'g', LOW>{}};
  runner.hooks().attach(any_hook<Ctx>(Tagged<'b'>{}, {.priority = ABOVE_NORMAL}));
  runner.hooks().attach(any_hook<Ctx>(Tagged<'d'>{}));  // NORMAL: after 'c', before 'e'
  runner.hooks().attach(any_hook<Ctx>(Tagged<'f'>{}, {.priority = BELOW_NORMAL}));
  runner.hooks().attach(any_hook<Ctx>(Tagged<'h'>{}, {.priority = LOWEST}));
  Ctx ctx;
  runner.fire<pts::on_post_step>(ctx);
  CHECK(ctx.log == std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "h"});

  auto rows = runner.hooks().table();
  std::string order;
  for (const auto& r : rows)
    if (r.point == "on_post_step") order += r.runtime ? 'R' : 'S';
  CHECK(order == "SRSRSRSR");
}

TEST_CASE("runtime hooks reject out-of-range priorities", "[runtime]") {
  CHECK_THROWS_WITH(any_hook<Ctx>(Tagged<'a'>{}, {.priority = 101}),
                    Catch::Contains("priority 101 is out of range [0, 100]"));
}

TEST_CASE("a runtime handler that cannot take the runner's context is an error", "[runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  CHECK_THROWS_WITH(
      runner.hooks().attach(any_hook<Ctx>(Wrong{})),
      Catch::Contains(
          "Wrong::run cannot be called with the context of TestRunner at point on_post_step"));
}

TEST_CASE("one shared runtime hook fires from several runners", "[runtime]") {
  auto shared = std::make_shared<MultiTarget>();
  Runner first{hookforge::runtime_hooks{}};
  Runner second{hookforge::runtime_hooks{}};
  first.hooks().attach(any_hook<Ctx>(shared));
  second.hooks().attach(any_hook<Ctx>(shared));
  Ctx ctx;
  first.fire<pts::on_post_step>(ctx);
  second.fire<pts::on_post_step>(ctx);
  CHECK(shared->calls == 2);
}

TEST_CASE("a misspelled point in a remap is named with the runner's closest points", "[runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  hookforge::hook_options options;
  options.bindings["count"] = {"on_post_stpe"};
  hookforge::capture_warnings warnings;
  runner.hooks().attach(any_hook<Ctx>(MultiTarget{}, options));
  REQUIRE(warnings.messages.size() == 1);
  CHECK_THAT(
      warnings.messages[0],
      Catch::Contains("(['count']) but TestRunner exposes no matching HookPoint") &&
          Catch::EndsWith("Unknown point name(s): 'on_post_stpe' (closest point of TestRunner: "
                          "on_post_step)."));
}

TEST_CASE("every unknown name of an unmatched handler is reported, strict or not", "[runtime]") {
  hookforge::hook_options options;
  options.bindings["count"] = {"on_post_stpe", "on_pre_noise"};
  {
    Runner runner{hookforge::runtime_hooks{}};
    hookforge::capture_warnings warnings;
    runner.hooks().attach(any_hook<Ctx>(MultiTarget{}, options));
    REQUIRE(warnings.messages.size() == 1);
    CHECK_THAT(warnings.messages[0],
               Catch::Contains("'on_post_stpe' (closest point of TestRunner: on_post_step)") &&
                   Catch::Contains("'on_pre_noise' (closest point of TestRunner: "));
  }
  Runner runner{hookforge::runtime_hooks{}};
  CHECK_THROWS_WITH(
      runner.hooks().attach(any_hook<Ctx>(MultiTarget{}, options), {.strict = true}),
      Catch::StartsWith("hookforge: Hook MultiTarget declares handler method(s) (['count'])") &&
          Catch::Contains("'on_post_stpe' (closest point of TestRunner: on_post_step)"));
}

TEST_CASE("beside a matching point, only a near miss of the runner's points is reported",
          "[runtime]") {
  hookforge::hook_options options;
  // A built-in point of another runner and a far-off custom name are legitimate for a
  // multi-target hook; "on_pre_atack" is one edit from the runner's on_pre_attack.
  options.bindings["count"] = {"on_post_step", "on_post_d_backward", "on_render_frame",
                               "on_pre_atack"};
  {
    Runner runner{hookforge::runtime_hooks{}};
    hookforge::capture_warnings warnings;
    runner.hooks().attach(any_hook<Ctx>(MultiTarget{}, options));
    REQUIRE(warnings.messages.size() == 1);
    CHECK(warnings.messages[0] ==
          "Handler MultiTarget::count binds to 'on_pre_atack' (closest point of TestRunner: "
          "on_pre_attack), "
          "which is no point of TestRunner nor a built-in point. Is it misspelled?");
    Ctx ctx;
    runner.fire<pts::on_post_step>(ctx);
    CHECK(ctx.counter == 1);  // the names that match still bind
  }
  Runner runner{hookforge::runtime_hooks{}};
  CHECK_THROWS_AS(runner.hooks().attach(any_hook<Ctx>(MultiTarget{}, options), {.strict = true}),
                  hookforge::binding_error);

  hookforge::capture_warnings none;
  Runner plain{hookforge::runtime_hooks{}};
  plain.hooks().attach(any_hook<Ctx>(MultiTarget{}),
                       {.strict = true});  // on_post_d_backward: built-in
  CHECK(none.messages.empty());
}
