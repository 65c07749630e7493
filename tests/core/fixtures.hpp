// Small hooks and runners shared by the core tests.
#pragma once

#include <string>
#include <vector>

#include "hookforge/hookforge.hpp"

namespace fixtures {

namespace pts = hookforge::points;

HOOKFORGE_POINT(on_pre_attack);
HOOKFORGE_POINT(on_post_attack);

/// Records which handler ran, in order.
struct Ctx {
  std::vector<std::string> log;
  int counter = 0;
};

/// A runner with three points; `Hooks...` is its pack.
template <class... Hooks>
class Runner {
 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_post_step, on_pre_attack>;
  using Ctx = fixtures::Ctx;
  static constexpr std::string_view runner_name = "TestRunner";

  explicit Runner(Hooks... hooks) : hooks_(std::move(hooks)...) {}

  template <class P>
  void fire(Ctx& ctx) {
    hooks_.template fire<P>(ctx);
  }
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<Runner, Hooks...> hooks_;
};
template <class... H>
Runner(H...) -> Runner<H...>;

/// Logs "<tag>" at on_post_step.
template <char Tag, int Priority = hookforge::priority::NORMAL>
struct Tagged {
  static constexpr int priority = Priority;
  void mark(Ctx& ctx) { ctx.log.push_back(std::string(1, Tag)); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(mark, pts::on_post_step));
};

/// One method bound to several points, one of which the runner lacks.
struct MultiTarget {
  int calls = 0;
  void count(Ctx& ctx) {
    ++calls;
    ++ctx.counter;
  }
  void on_post_step(Ctx&) { throw "named like a point, bound nowhere"; }
  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(count, pts::on_post_step, pts::on_post_d_backward, on_pre_attack));
};

/// Two handlers.
struct TwoHandlers {
  void start(Ctx& ctx) { ctx.log.push_back("start"); }
  void step(Ctx& ctx) { ctx.log.push_back("step"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(start, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(step, pts::on_post_step));
};

/// A hook with state.
struct Stateful {
  int value = 0;
  void bump(Ctx&) { ++value; }
  int state_dict() const { return value; }
  void load_state_dict(int v) { value = v; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(bump, pts::on_post_step));
};

}  // namespace fixtures
