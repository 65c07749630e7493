// A runner shared by the batch-field cases: it says which fields its batch holds at which
// point (core/fields.hpp), its points listed in firing order.
#pragma once

#include "hookforge/hookforge.hpp"

namespace pts = hookforge::points;

struct StepCtx {
  int step = 0;
};

template <class... Hooks>
class TrainingLoop {
 public:
  using hook_points = hookforge::point_list<pts::on_pre_step, pts::on_post_forward, pts::on_post_step>;
  using Ctx = StepCtx;
  using batch_fields =
      hookforge::batch_fields<hookforge::fields_at<pts::on_pre_step, "input", "target">,
                              hookforge::fields_at<pts::on_post_forward, "input", "target", "output">,
                              hookforge::fields_at<pts::on_post_step, "input", "target", "output">>;
  explicit TrainingLoop(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  void run() {
    Ctx ctx;
    hooks_.template fire<pts::on_pre_step>(ctx);
    hooks_.template fire<pts::on_post_forward>(ctx);
    hooks_.template fire<pts::on_post_step>(ctx);
  }
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<TrainingLoop, Hooks...> hooks_;
};
template <class... H>
TrainingLoop(H...) -> TrainingLoop<H...>;
