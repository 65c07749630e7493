#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <vector>

#include "fixtures.hpp"

using namespace fixtures;
using hookforge::handler_fields;

namespace {

/// Reads and writes, the reads of `log` in two pieces that overlap.
struct FieldLogger {
  void upsample(Ctx& ctx) { ctx.log.push_back("upsample"); }
  void log(Ctx& ctx) { ctx.log.push_back("log"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(upsample, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(log, pts::on_post_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"log", "lr", "output">{},
                                                   hookforge::writes<"upsample", "sr">{},
                                                   hookforge::reads<"log", "output", "sr">{});
};

/// A runner that says which fields its batch holds where; its points in firing order.
template <class... Hooks>
class FieldRunner {
 public:
  using hook_points =
      hookforge::point_list<pts::on_pre_step, pts::on_post_forward, pts::on_post_step>;
  using Ctx = fixtures::Ctx;
  using batch_fields =
      hookforge::batch_fields<hookforge::fields_at<pts::on_pre_step, "input", "target">,
                              hookforge::fields_at<pts::on_post_step, "input", "target", "output">>;

  explicit FieldRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  void step(Ctx& ctx) {
    hooks_.template fire<pts::on_pre_step>(ctx);
    hooks_.template fire<pts::on_post_forward>(ctx);
    hooks_.template fire<pts::on_post_step>(ctx);
  }
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<FieldRunner, Hooks...> hooks_;
};
template <class... H>
FieldRunner(H...) -> FieldRunner<H...>;

struct Upsampler {
  void upsample(Ctx& ctx) { ctx.log.push_back("upsample"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(upsample, pts::on_pre_step));
  static constexpr auto fields = hookforge::fields(hookforge::writes<"upsample", "sr">{});
};

struct Viewer {
  void view(Ctx& ctx) { ctx.log.push_back("view"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(view, pts::on_post_step));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"view", "sr", "output">{});
};

/// Reads a field no fields_at lists, at a point the runner does not check.
struct Peeker {
  void peek(Ctx& ctx) { ctx.log.push_back("peek"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(peek, pts::on_post_forward));
  static constexpr auto fields = hookforge::fields(hookforge::reads<"peek", "anything">{});
};

}  // namespace

TEST_CASE("field_use_of merges a handler's reads and writes, seen through wrappers", "[fields]") {
  const std::vector<handler_fields> expected{{"log", {"lr", "output", "sr"}, {}},
                                             {"upsample", {}, {"sr"}}};
  STATIC_REQUIRE(hookforge::declares_fields_v<FieldLogger>);
  CHECK(hookforge::field_use_of<FieldLogger>() == expected);

  FieldLogger logger;
  using by_ref = decltype(hookforge::ref(logger));
  using moved = decltype(hookforge::rebind<"log", pts::on_epoch_start>(FieldLogger{}));
  STATIC_REQUIRE(hookforge::declares_fields_v<by_ref>);
  STATIC_REQUIRE(hookforge::declares_fields_v<moved>);
  CHECK(hookforge::field_use_of<by_ref>() == expected);
  CHECK(hookforge::field_use_of<hookforge::ref_hook<moved>>() == expected);
}

TEST_CASE("a hook without fields declares nothing", "[fields]") {
  struct OtherFields {  // a `fields` member hookforge::fields() did not make
    std::vector<std::string> fields;
  };
  STATIC_REQUIRE_FALSE(hookforge::declares_fields_v<TwoHandlers>);
  STATIC_REQUIRE_FALSE(hookforge::declares_fields_v<OtherFields>);
  CHECK(hookforge::field_use_of<TwoHandlers>().empty());
}

TEST_CASE("a field written at an earlier point may be read later", "[fields]") {
  FieldRunner runner{Viewer{}, Upsampler{}, Peeker{}, Tagged<'t'>{}};
  Ctx ctx;
  runner.step(ctx);
  CHECK(ctx.log == std::vector<std::string>{"upsample", "peek", "view", "t"});
}

TEST_CASE("the flow rule finds the first field no earlier stage provides", "[fields]") {
  using hookforge::detail::fields_report;
  using hookforge::detail::type_list;
  // Viewer alone: nothing writes "sr".
  using alone = fields_report<FieldRunner<Viewer>, Viewer, type_list<Viewer>>;
  STATIC_REQUIRE_FALSE(alone::provided);
  STATIC_REQUIRE(alone::field == hookforge::fixed_string("sr"));
  STATIC_REQUIRE(alone::binding::method == "view");
  STATIC_REQUIRE(std::is_same_v<alone::point, pts::on_post_step>);
  STATIC_REQUIRE(
      std::is_same_v<alone::present, hookforge::field_list<"input", "target", "output">>);

  // Written at the same point is not earlier; written earlier is present.
  using late_writer = decltype(hookforge::rebind<"upsample", pts::on_post_step>(Upsampler{}));
  STATIC_REQUIRE_FALSE(fields_report<FieldRunner<Viewer, late_writer>, Viewer,
                                     type_list<Viewer, late_writer>>::provided);
  using with_writer =
      fields_report<FieldRunner<Viewer, Upsampler>, Viewer, type_list<Viewer, Upsampler>>;
  STATIC_REQUIRE(with_writer::provided);
}

TEST_CASE("the binding table shows each handler's fields", "[fields]") {
  Runner runner{FieldLogger{}, Tagged<'a'>{}};
  CHECK(runner.hooks().format_table() ==
        "TestRunner\n"
        "  on_epoch_start\n"
        "    NORMAL (50)        FieldLogger::upsample   writes sr\n"
        "  on_post_step\n"
        "    NORMAL (50)        FieldLogger::log   reads lr, output, sr\n"
        "    NORMAL (50)        Tagged::mark\n"
        "  on_pre_attack                -\n");
  auto rows = runner.hooks().table();
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].fields == "reads lr, output, sr");
  CHECK(rows[2].fields.empty());
}

TEST_CASE("a runtime hook's handlers show their fields in the table too", "[fields][runtime]") {
  Runner runner{hookforge::runtime_hooks{}};
  runner.hooks().attach(hookforge::any_hook<Ctx>(FieldLogger{}));
  CHECK(runner.hooks().format_table() ==
        "TestRunner\n"
        "  on_epoch_start\n"
        "    NORMAL (50)        FieldLogger::upsample   writes sr   [runtime]\n"
        "  on_post_step\n"
        "    NORMAL (50)        FieldLogger::log   reads lr, output, sr   [runtime]\n"
        "  on_pre_attack                -\n");
}
