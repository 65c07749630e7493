// A hook that reads the host, attached at a point the runner records in a CUDA graph.
#include "common.hpp"

template <class... Hooks>
class GraphedRunner {
 public:
  using hook_points = hookforge::point_list<pts::on_post_backward, pts::on_post_step>;
  using captured_points = hookforge::point_list<pts::on_post_backward>;  // replayed
  using Ctx = TrainCtx;
  explicit GraphedRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<GraphedRunner, Hooks...> hooks_;
};
template <class... H>
GraphedRunner(H...) -> GraphedRunner<H...>;

struct NormPrinter {  // would print a device value: not capture-safe, as by default
  void print(TrainCtx&) {}
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
#ifdef HOOKFORGE_SHOULD_FAIL
      print, pts::on_post_backward
#else
      print, pts::on_post_step  // after the replay: any hook may run there
#endif
      ));
};

int main() { GraphedRunner runner{NormPrinter{}}; }
