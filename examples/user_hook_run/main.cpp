// A user's own hook in a config-driven run: one HOOKFORGE_REGISTER line makes `GradNorm`
// a name configs can use, and hookforge::run::main is the whole hookforge-run command line.
//
//   hookforge_example_user_hook_run configs/user_hook.yaml            # trains, printing grad norms
//   hookforge_example_user_hook_run configs/user_hook.yaml --check    # its place in the tables
//
// hookforge-run itself does not know GradNorm: the config names it, so it runs with this
// program (the same CLI, plus the registrations of this file).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include <hookforge/run.hpp>

namespace pts = hookforge::points;

/// The global gradient norm after backward: printed every `every` steps, the epoch's largest at its
/// end.
struct GradNorm {
  std::int64_t every = 10;
  double largest = 0;

  explicit GradNorm(std::int64_t every_) : every(every_) {
    if (every < 1)
      throw std::invalid_argument("GradNorm: every must be >= 1, got " + std::to_string(every));
  }

  // Constrained: registered for every torch context (kinds::hook), the handlers are
  // instantiated only for contexts that have what they read (training runners' contexts);
  // listed under another component, the config reports it, naming the handler.
  template <class C>
    requires requires(C& c) { c.parameters(); }
  void measure(C& ctx) {
    double norm = 0;
    for (const auto& p : ctx.parameters())
      if (p.grad().defined()) norm += p.grad().detach().pow(2).sum().template item<double>();
    norm = std::sqrt(norm);
    largest = std::max(largest, norm);
    if ((ctx.global_step + 1) % every == 0)
      fmt::print("  grad norm at step {}: {:.4f}\n", ctx.global_step + 1, norm);
  }
  template <class C>
    requires requires(C& c) { c.parameters(); }
  void report(C& ctx) {
    fmt::print("  largest grad norm of epoch {}: {:.4f}\n", ctx.epoch + 1, largest);
    largest = 0;
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(measure, pts::on_post_backward),
                          HOOKFORGE_HOOKS_INTO(report, pts::on_epoch_end));
};

// The one line: GradNorm, with its parameter, for any torch component (kinds::hook).
HOOKFORGE_REGISTER(hook, GradNorm, hookforge::config::arg<std::int64_t>("every", 10));

int main(int argc, char** argv) { return hookforge::run::main(argc, argv); }
