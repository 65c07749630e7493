// Two stateful hooks of one type need distinct state keys.
#include "common.hpp"

struct EMA {
  double value = 0;
  void update(TrainCtx&) { value += 1; }
  double state_dict() const { return value; }
  void load_state_dict(double v) { value = v; }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(update, pts::on_post_step));
};

int main() {
#ifdef HOOKFORGE_SHOULD_FAIL
  ValidationRunner runner{EMA{}, EMA{}};
#else
  ValidationRunner runner{hookforge::keyed<"ema_fast">(EMA{}), hookforge::keyed<"ema_slow">(EMA{})};
#endif
  runner.run();
}
