// Prelude of docs/concepts.md's statement blocks on AttackRunner (tests/docs/snippets.py): the
// runner as the page defines it; a block goes inside example().
#pragma once
#include "tests/docs/preludes/attack.hpp"

template <class... Hooks>
class AttackRunner {
 public:
  using hook_points = hookforge::point_list<points::on_epoch_start, on_pre_attack, on_post_attack>;
  using Ctx = AttackCtx;
  explicit AttackRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<AttackRunner, Hooks...> hooks_;
};
template <class... H>
AttackRunner(H...) -> AttackRunner<H...>;

inline void example() {
  // snippet
}
