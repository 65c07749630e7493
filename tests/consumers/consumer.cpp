// A tiny program that uses hookforge as a dependency would.
#include <hookforge/hookforge.hpp>

#include <cstdio>

namespace pts = hookforge::points;

struct Ctx {
  int steps = 0;
};

struct StepCounter {
  void count(Ctx& ctx) { ++ctx.steps; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

template <class... Hooks>
struct Loop {
  using hook_points = hookforge::point_list<pts::on_post_step>;
  using Ctx = ::Ctx;
  explicit Loop(Hooks... h) : hooks(std::move(h)...) {}
  hookforge::hook_pack<Loop, Hooks...> hooks;
};
template <class... H>
Loop(H...) -> Loop<H...>;

int main() {
  Loop loop{StepCounter{}};
  Ctx ctx;
  for (int i = 0; i < 3; ++i) loop.hooks.fire<pts::on_post_step>(ctx);
  std::printf("consumer: %d steps\n", ctx.steps);
  return ctx.steps == 3 ? 0 : 1;
}
