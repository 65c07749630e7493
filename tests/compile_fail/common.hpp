// A runner shared by the compile-fail cases: it declares only the epoch-runner points.
#pragma once

#include "hookforge/hookforge.hpp"

namespace pts = hookforge::points;

struct TrainCtx {
  int step = 0;
};

template <class... Hooks>
class ValidationRunner {
 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_post_step, pts::on_epoch_end>;
  using Ctx = TrainCtx;
  explicit ValidationRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  void run() {
    Ctx ctx;
    hooks_.template fire<pts::on_post_step>(ctx);
  }
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<ValidationRunner, Hooks...> hooks_;
};
template <class... H>
ValidationRunner(H...) -> ValidationRunner<H...>;
