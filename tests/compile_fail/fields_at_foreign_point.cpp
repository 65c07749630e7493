// A runner's batch_fields name only points it fires (its hook_points).
#include "hookforge/hookforge.hpp"

namespace pts = hookforge::points;

struct Counter {
  void count(int& steps) { ++steps; }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

template <class... Hooks>
class StepLoop {
 public:
  using hook_points = hookforge::point_list<pts::on_pre_step, pts::on_post_step>;
  using Ctx = int;
#ifdef HOOKFORGE_SHOULD_FAIL
  using batch_fields = hookforge::batch_fields<hookforge::fields_at<pts::on_post_forward, "output">>;
#else
  using batch_fields = hookforge::batch_fields<hookforge::fields_at<pts::on_post_step, "output">>;
#endif
  explicit StepLoop(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<StepLoop, Hooks...> hooks_;
};

int main() {
  StepLoop<Counter> loop{Counter{}};
  int steps = 0;
  loop.hooks().fire<pts::on_post_step>(steps);
}
