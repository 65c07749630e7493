// A custom runner, without LibTorch: it declares its own hook points
// (on_pre_attack, on_post_attack) next to two built-in ones, and hooks bind to
// them exactly as they bind to the built-in runners.
//
// The "model" is a threshold classifier on numbers; the runner attacks each
// sample by pushing it towards the decision boundary and counts the flips.
#include <hookforge/hookforge.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include <fmt/core.h>

namespace pts = hookforge::points;

// --- the runner -------------------------------------------------------------------------
HOOKFORGE_POINT(on_pre_attack);
HOOKFORGE_POINT(on_post_attack);

struct AttackCtx {
  int epoch = 0;
  std::size_t index = 0;  // sample within the epoch
  double sample = 0;      // the clean input
  double perturbed = 0;   // the input after the attack
  double strength = 0.1;  // hooks may change it before the attack
  bool flipped = false;   // did the attack change the prediction?
  int flips = 0;          // flips this epoch
};

template <class... Hooks>
class AttackRunner {
 public:
  using hook_points =
      hookforge::point_list<pts::on_epoch_start, on_pre_attack, on_post_attack, pts::on_epoch_end>;
  using Ctx = AttackCtx;

  explicit AttackRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}

  int run_epoch(const std::vector<double>& samples, int epoch) {
    Ctx ctx;
    ctx.epoch = epoch;
    hooks_.template fire<pts::on_epoch_start>(ctx);
    for (ctx.index = 0; ctx.index < samples.size(); ++ctx.index) {
      ctx.sample = samples[ctx.index];
      ctx.strength = 0.1;
      hooks_.template fire<on_pre_attack>(ctx);
      ctx.perturbed = ctx.sample - std::copysign(ctx.strength, ctx.sample);  // towards 0
      ctx.flipped = predict(ctx.perturbed) != predict(ctx.sample);
      ctx.flips += ctx.flipped;
      hooks_.template fire<on_post_attack>(ctx);
    }
    hooks_.template fire<pts::on_epoch_end>(ctx);
    return ctx.flips;
  }

  auto& hooks() { return hooks_; }

 private:
  static bool predict(double x) { return x > 0; }
  hookforge::hook_pack<AttackRunner, Hooks...> hooks_;
};
template <class... H>
AttackRunner(H...) -> AttackRunner<H...>;

// --- hooks --------------------------------------------------------------------------------

/// Grows the attack strength with the epoch: binds to the runner's own point.
struct StrengthSchedule {
  double per_epoch = 0.2;
  void set_strength(AttackCtx& ctx) { ctx.strength = 0.1 + per_epoch * ctx.epoch; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(set_strength, on_pre_attack));
};

/// One method bound to several points. It reads only what every context here
/// has, and lists on_post_step too, which this runner lacks: it is simply not
/// bound there.
struct Tracer {
  int events = 0;
  void trace(auto& ctx) {
    ++events;
    (void)ctx;
  }
  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(trace, on_pre_attack, on_post_attack, pts::on_post_step));
};

/// Prints the epoch's result; runs last so it sees every other hook's work.
struct Report {
  static constexpr int priority = hookforge::priority::LOWEST;
  void print(AttackCtx& ctx) {
    fmt::print("epoch {}: {} of {} samples flipped\n", ctx.epoch, ctx.flips, ctx.index);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(print, pts::on_epoch_end));
};

/// Logs each flip; attached from "config" at run time below.
struct FlipLogger {
  void log(AttackCtx& ctx) {
    if (ctx.flipped) fmt::print("  flip: sample {:+.2f} -> {:+.2f}\n", ctx.sample, ctx.perturbed);
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(log, on_post_attack));
};

int main() {
  const std::vector<double> samples{-0.9, -0.35, -0.05, 0.15, 0.4, 0.8};

  Tracer tracer;  // shared by reference: the object outlives the runner
  AttackRunner runner{StrengthSchedule{}, hookforge::ref(tracer), Report{},
                      hookforge::runtime_hooks{}};

  // A config-driven hook: type-erased, bound by point name when attached, with the priority a
  // config file would give it. It lands in the same order as the static hooks.
  hookforge::hook_options options;
  options.priority = hookforge::priority::HIGH;
  runner.hooks().attach(hookforge::any_hook<AttackCtx>(FlipLogger{}, options));

  fmt::print("{}\n", runner.hooks().format_table());

  int total = 0;
  for (int epoch = 0; epoch < 3; ++epoch) total += runner.run_epoch(samples, epoch);
  fmt::print("total flips: {}, tracer saw {} events\n", total, tracer.events);
  return total > 0 ? 0 : 1;
}
