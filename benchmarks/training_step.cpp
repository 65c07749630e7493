// The cost of hooks in a real LibTorch training step.
//
// A 64 -> 64 -> 1 MLP, batch 32, SGD, one thread. One benchmark iteration is one
// epoch of `kBatches` steps; times are reported per step. Variants:
//   plain         the step written by hand: zero_grad, forward, MSE, backward, step,
//                 and the loss kept for the epoch's mean (as any real loop does)
//   runner/0      TrainingEpochRunner with no hooks
//   runner/8      TrainingEpochRunner with 8 trivial static hooks across its points
//   runtime/8     the same 8 hooks attached at run time (any_hook)
//   runner/default  TrainingEpochRunner with default_hooks' share for a training runner:
//                 IterTimer, ProgressBar (refresh 10, to a discarding stream), LossLogger
// Run with --benchmark_repetitions=N --benchmark_enable_random_interleaving=true
// (the defaults of `main` below): repetitions of the variants are interleaved, and
// the summary prints each variant's median and its ratio to `plain`.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string_view>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/torch.hpp"
#include "mlp.hpp"

namespace {

namespace pts = hookforge::points;
using hookforge::Entry;
constexpr int kBatches = 64;

using bench::Mlp;

std::vector<Entry> data() {
  torch::manual_seed(0);
  std::vector<Entry> batches;
  for (int i = 0; i < kBatches; ++i)
    batches.push_back(Entry{{"input", torch::randn({32, 64})}, {"target", torch::randn({32, 1})}});
  return batches;
}

/// A trivial hook: counts its calls (observable work the optimiser cannot drop).
template <int I, class Point>
struct Tick {
  std::int64_t calls = 0;
  void tick(hookforge::TrainingContext&) { ++calls; }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, Point));
};
using T0 = Tick<0, pts::on_epoch_start>;
using T1 = Tick<1, pts::on_pre_step>;
using T2 = Tick<2, pts::on_post_forward>;
using T3 = Tick<3, pts::on_post_backward>;
using T4 = Tick<4, pts::on_post_backward>;
using T5 = Tick<5, pts::on_post_step>;
using T6 = Tick<6, pts::on_post_step>;
using T7 = Tick<7, pts::on_epoch_end>;

torch::Tensor mse(const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); }

/// One variant, ready to run epochs: everything it needs is owned by the closure.
struct Variant {
  std::function<void()> epoch;      ///< one epoch of kBatches steps
  std::function<bool()> hooks_ran;  ///< the hooks really fired (false when they should have)
};

/// The hand-written loop: what a user writes without a framework.
struct Plain {
  std::vector<Entry> batches = data();
  Mlp model = (torch::manual_seed(1), Mlp());
  torch::optim::SGD sgd{model->parameters(), 0.01};
  void epoch() {
    model->train();
    std::vector<torch::Tensor> losses;
    for (auto& batch : batches) {
      sgd.zero_grad();
      auto loss = torch::mse_loss(model->forward(batch.at("input")), batch.at("target"));
      loss.backward();
      sgd.step();
      losses.push_back(loss.detach());  // kept for the epoch's mean, as the runner does
    }
    benchmark::DoNotOptimize(torch::stack(losses).mean().item<double>());
  }
};

/// TrainingEpochRunner with the given hooks.
template <class... Hooks>
struct WithRunner {
  std::vector<Entry> batches = data();
  Mlp model = (torch::manual_seed(1), Mlp());
  torch::optim::SGD sgd{model->parameters(), 0.01};
  hookforge::TrainingEpochRunner<Hooks...> runner;
  std::int64_t epochs = 0;
  explicit WithRunner(Hooks... hooks) : runner(sgd, {}, std::move(hooks)...) {}
  void epoch() {
    auto criterion = mse;
    benchmark::DoNotOptimize(runner.run_epoch(model, batches, epochs++, criterion));
  }
};

Variant make_variant(std::string_view name) {
  if (name == "plain") {
    auto v = std::make_shared<Plain>();
    return {[v] { v->epoch(); }, [] { return true; }};
  }
  if (name == "runner/0") {
    auto v = std::make_shared<WithRunner<>>();
    return {[v] { v->epoch(); }, [] { return true; }};
  }
  if (name == "runner/8") {
    auto v = std::make_shared<WithRunner<T0, T1, T2, T3, T4, T5, T6, T7>>(T0{}, T1{}, T2{}, T3{},
                                                                          T4{}, T5{}, T6{}, T7{});
    return {[v] { v->epoch(); }, [v] { return v->runner.hooks().template get<1>().calls > 0; }};
  }
  if (name == "runtime/8") {
    auto v = std::make_shared<WithRunner<hookforge::runtime_hooks>>(hookforge::runtime_hooks{});
    using C = hookforge::TrainingContext;
    auto probe = std::make_shared<T1>();
    v->runner.hooks().attach(hookforge::any_hook<C>(T0{}));
    v->runner.hooks().attach(hookforge::any_hook<C>(probe));
    v->runner.hooks().attach(hookforge::any_hook<C>(T2{}));
    v->runner.hooks().attach(hookforge::any_hook<C>(T3{}));
    v->runner.hooks().attach(hookforge::any_hook<C>(T4{}));
    v->runner.hooks().attach(hookforge::any_hook<C>(T5{}));
    v->runner.hooks().attach(hookforge::any_hook<C>(T6{}));
    v->runner.hooks().attach(hookforge::any_hook<C>(T7{}));
    return {[v] { v->epoch(); }, [probe] { return probe->calls > 0; }};
  }
  if (name == "runner/default") {
    // The defaults' console output goes to a stream that discards it (no buffer: every
    // write fails at once), so the terminal's cost is not measured, only the hooks'.
    struct WithDefaults {
      std::ostream discard{nullptr};
      hookforge::default_hooks defaults{
          {.progress = {.stream = &discard}, .logger = {.stream = &discard}}};
      WithRunner<decltype(defaults.training())> with{defaults.training()};
    };
    auto v = std::make_shared<WithDefaults>();
    return {[v] { v->with.epoch(); }, [v] { return v->defaults.timer.training().iterations > 0; }};
  }
  return {};
}

constexpr std::string_view kVariants[] = {"plain", "runner/0", "runner/8", "runtime/8",
                                          "runner/default"};

void BM_step(benchmark::State& state, std::string_view name) {
  torch::set_num_threads(1);
  auto variant = make_variant(name);
  for (auto _ : state) variant.epoch();
  if (!variant.hooks_ran()) state.SkipWithError("hooks did not run");
  state.counters["us_per_step"] =
      benchmark::Counter(double(state.iterations()) * kBatches * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// Counted by callgrind_step.sh (valgrind --toggle-collect='*measured_epochs*').
[[gnu::noinline]] void measured_epochs(Variant& variant, int epochs) {
  for (int i = 0; i < epochs; ++i) variant.epoch();
}

/// Prints the usual output, and at the end each variant's median time per step and
/// its ratio to the plain loop (the ratio of medians, and the median of the ratios of
/// repetitions run side by side).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs)
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        per_step_[run.run_name.function_name].push_back(run.GetAdjustedRealTime() / kBatches);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.empty()
                 ? 0.0
                 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
    };
    const auto& plain = per_step_["step/plain"];
    std::printf(
        "\n| variant | median per step (us) | ratio to plain (medians) | median of paired ratios "
        "|\n");
    std::printf("|---|---|---|---|\n");
    for (const auto& [name, times] : per_step_) {
      std::vector<double> ratios;
      for (std::size_t i = 0; i < times.size() && i < plain.size(); ++i)
        ratios.push_back(times[i] / plain[i]);
      std::printf("| %s | %.2f | %.4f | %.4f |\n", name.c_str(), median(times) * 1e3,
                  median(times) / median(plain), median(ratios));
    }
  }

 private:
  std::map<std::string, std::vector<double>> per_step_;
};

}  // namespace

int main(int argc, char** argv) {
  // Instruction counts: training_step --instructions <variant> <epochs>, under callgrind.
  if (argc == 4 && std::string_view(argv[1]) == "--instructions") {
    torch::set_num_threads(1);
    auto variant = make_variant(argv[2]);
    if (!variant.epoch) {
      std::fprintf(stderr, "unknown variant '%s'\n", argv[2]);
      return 2;
    }
    variant.epoch();  // warm-up: first-call allocations are not part of a step
    measured_epochs(variant, std::atoi(argv[3]));
    return variant.hooks_ran() ? 0 : 1;
  }
  for (auto name : kVariants)
    benchmark::RegisterBenchmark(("step/" + std::string(name)).c_str(), BM_step, name)
        ->Unit(benchmark::kMillisecond);
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=15",
              interleave = "--benchmark_enable_random_interleaving=true";
  bool has_reps = false;
  for (int i = 1; i < argc; ++i)
    has_reps = has_reps || std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
  if (!has_reps) args.push_back(reps.data());
  args.push_back(interleave.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}
