// A hook that says what its handler needs from a context (context_lacks), attached to a
// runner whose context lacks it: the message names the missing field.
#include <string_view>

#include "common.hpp"

struct LossWatcher {
  template <class C>
  static consteval std::string_view context_lacks() {
#ifdef HOOKFORGE_SHOULD_FAIL
    if constexpr (!requires(C& c) { c.loss; }) return "loss";
#else
    if constexpr (!requires(C& c) { c.step; }) return "step";
#endif
    return "";
  }
  template <hookforge::context_for<LossWatcher> C>
  void watch(C&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(watch, pts::on_post_step));
};

int main() {
  ValidationRunner runner{LossWatcher{}};
  runner.run();
}
