// The training step on a GPU: the hand-written LibTorch loop, TrainingEpochRunner with
// default_hooks, and CudaGraphTrainingRunner with the same hooks, side by side.
//
//   hookforge_gpu_step [--device cuda|cpu] [--rounds N] [--steps S] [--warmup W]
//
// Two models: a 64 -> 64 -> 1 MLP (batch 32) and ESPCN x2 (batch 16, 48x48 inputs), SGD
// with momentum, S batches made beforehand on the device (the loader is not measured). One
// round times one epoch of S steps of every variant in turn (interleaved, so that a slow
// moment of the machine falls on all of them); W rounds are warm-up. On CUDA an epoch is
// timed with CUDA events on the stream, so a step the host cannot launch fast enough shows
// as time; and the epochs run with c10's sync-debug mode at "warn", counting the host
// synchronisations per epoch (an epoch's end reads its mean scores: some are expected).
// On the CPU (a rehearsal of the GPU run) the host clock times it and the graph is skipped.
// Prints one table per model: median microseconds per step, the spread (min-max over the
// rounds), the ratio of medians to the plain loop, and synchronisations per epoch.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/torch.hpp"
#include "mlp.hpp"
#include "hookforge/torch/runners/cuda_graph_runner.hpp"

#if HOOKFORGE_HAS_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace {

using hookforge::Entry;

using bench::Mlp;

struct Settings {
  torch::Device device = torch::kCPU;
  int rounds = 8, steps = 50, warmup = 2;
};

/// Times an epoch: CUDA events on the current stream, or the host clock on the CPU.
class EpochClock {
 public:
  explicit EpochClock(torch::Device device) : device_(device) {}
  template <class F>
  double microseconds(F&& epoch) {
#if HOOKFORGE_HAS_CUDA
    if (device_.is_cuda()) {
      cudaEvent_t start = nullptr, stop = nullptr;
      cudaEventCreate(&start);
      cudaEventCreate(&stop);
      const auto stream = c10::cuda::getCurrentCUDAStream(device_.index()).stream();
      cudaEventRecord(start, stream);
      epoch();
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      return 1000.0 * ms;
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    epoch();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  torch::Device device_;
};

#if HOOKFORGE_HAS_CUDA
/// Counts c10's "synchronizing CUDA operation" warnings while it lives, with the sync-debug
/// mode at "warn" (on a CUDA device; nothing elsewhere).
class SyncCounter : public c10::WarningHandler {
 public:
  explicit SyncCounter(torch::Device device) : on_(device.is_cuda()) {
    if (!on_) return;
    previous_ = c10::WarningUtils::get_warning_handler();
    c10::WarningUtils::set_warning_handler(this);
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
  }
  ~SyncCounter() override {
    if (!on_) return;
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
    c10::WarningUtils::set_warning_handler(previous_);
  }
  void process(const c10::Warning& warning) override {
    if (warning.msg().find("synchroniz") != std::string::npos) ++count;
  }
  std::int64_t count = 0;

 private:
  bool on_;
  c10::WarningHandler* previous_ = nullptr;
};
#else
/// A LibTorch without CUDA has no sync-debug mode (and 1.13's warning handler another
/// signature): nothing to count.
struct SyncCounter {
  explicit SyncCounter(torch::Device) {}
  std::int64_t count = 0;
};
#endif

/// One variant of one model: a name and an epoch over the model's batches.
struct Variant {
  Variant(std::string name, std::function<void(std::int64_t)> epoch)
      : name(std::move(name)), epoch(std::move(epoch)) {}
  std::string name;
  std::function<void(std::int64_t epoch)> epoch;
  std::vector<double> per_step;  // microseconds, one per measured round
  std::int64_t syncs = 0;        // over the measured rounds
};

/// A model's three variants, each with its own copy of the model and optimiser.
template <class Make>
std::vector<Variant> variants(Make make, const std::vector<Entry>& batches, torch::Device device) {
  auto criterion = [](const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); };
  auto sgd = [](auto& model) {
    return std::make_shared<torch::optim::SGD>(model->parameters(),
                                               torch::optim::SGDOptions(0.01).momentum(0.9));
  };
  std::vector<Variant> out;
  {
    auto model = make();
    auto optimizer = sgd(model);
    out.push_back({"plain", [=](std::int64_t) mutable {
                     model->train();
                     std::vector<torch::Tensor> losses;
                     for (const auto& batch : batches) {
                       optimizer->zero_grad();
                       auto loss =
                           torch::mse_loss(model->forward(batch.at("input")), batch.at("target"));
                       loss.backward();
                       optimizer->step();
                       losses.push_back(loss.detach());
                     }
                     (void)torch::stack(losses).mean().item<double>();
                   }});
  }
  // The defaults' console output goes to a stream that discards it: the hooks' cost is
  // measured, not the terminal's.
  struct Defaults {
    std::ostream discard{nullptr};
    hookforge::default_hooks hooks{
        {.progress = {.stream = &discard}, .logger = {.stream = &discard}}};
  };
  {
    auto model = make();
    auto optimizer = sgd(model);
    auto defaults = std::make_shared<Defaults>();
    auto runner =
        std::make_shared<hookforge::TrainingEpochRunner<decltype(defaults->hooks.training())>>(
            *optimizer, hookforge::training_options{.device = device}, defaults->hooks.training());
    out.push_back({"runner/default", [=](std::int64_t epoch) mutable {
                     (void)runner->run_epoch(model, batches, epoch, criterion);
                     (void)optimizer;
                     (void)defaults;
                   }});
  }
  if (device.is_cuda()) {
    auto model = make();
    auto optimizer = sgd(model);
    auto defaults = std::make_shared<Defaults>();
    auto runner =
        std::make_shared<hookforge::CudaGraphTrainingRunner<decltype(defaults->hooks.training())>>(
            *optimizer, hookforge::training_options{.device = device},
            hookforge::cuda_graph_options{}, defaults->hooks.training());
    out.push_back({"graph/default", [=](std::int64_t epoch) mutable {
                     (void)runner->run_epoch(model, batches, epoch, criterion);
                     (void)optimizer;
                     (void)defaults;
                   }});
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

void measure(const char* title, std::vector<Variant> all, const Settings& s) {
  EpochClock clock(s.device);
  for (int round = 0; round < s.warmup + s.rounds; ++round) {
    for (auto& v : all) {
      const bool measured = round >= s.warmup;
      std::int64_t syncs = 0;
      const double us = [&] {
        SyncCounter counter(measured ? s.device : torch::Device(torch::kCPU));
        const double t = clock.microseconds([&] { v.epoch(round); });
        syncs = counter.count;
        return t;
      }();
      if (!measured) continue;
      v.per_step.push_back(us / s.steps);
      v.syncs += syncs;
    }
  }
  const double plain = median(all.front().per_step);
  std::printf("\n%s, %s, %d steps x %d rounds (after %d warm-up rounds)\n\n", title,
              s.device.str().c_str(), s.steps, s.rounds, s.warmup);
  std::printf("| variant | median us/step | spread (min-max) | ratio to plain | syncs/epoch |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const auto& v : all) {
    const auto [lo, hi] = std::minmax_element(v.per_step.begin(), v.per_step.end());
    const double m = median(v.per_step);
    std::printf("| %s | %.1f | %.1f-%.1f | %.3f | %s |\n", v.name.c_str(), m, *lo, *hi, m / plain,
                s.device.is_cuda() ? std::to_string(double(v.syncs) / s.rounds).c_str() : "-");
  }
  if (!s.device.is_cuda()) std::printf("\n(graph/default: skipped, a CUDA graph needs a GPU)\n");
  std::fflush(stdout);
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--device")
      s.device = torch::Device(value);
    else if (key == "--rounds")
      s.rounds = std::atoi(value);
    else if (key == "--steps")
      s.steps = std::atoi(value);
    else if (key == "--warmup")
      s.warmup = std::atoi(value);
    else {
      std::fprintf(stderr, "hookforge_gpu_step: unknown option %s\n", argv[i]);
      std::exit(2);
    }
  }
  if (s.rounds < 1 || s.steps < 1 || s.warmup < 0) {
    std::fprintf(stderr, "hookforge_gpu_step: --rounds and --steps must be >= 1\n");
    std::exit(2);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  if (s.device.is_cuda() && !torch::cuda::is_available()) {
    std::fprintf(stderr, "hookforge_gpu_step: no CUDA device here; run with --device cpu\n");
    return 2;
  }
  torch::manual_seed(0);
  std::vector<Entry> mlp_batches, sr_batches;
  for (int i = 0; i < s.steps; ++i) {
    mlp_batches.push_back(
        Entry{{"input", torch::randn({32, 64})}, {"target", torch::randn({32, 1})}}.to(s.device));
    sr_batches.push_back(
        Entry{{"input", torch::rand({16, 1, 48, 48})}, {"target", torch::rand({16, 1, 96, 96})}}.to(
            s.device));
  }
  const auto device = s.device;
  measure("MLP 64-64-1, batch 32",
          variants(
              [device] {
                torch::manual_seed(1);
                Mlp m;
                m->to(device);
                return m;
              },
              mlp_batches, device),
          s);
  measure("ESPCN x2, batch 16, 48x48",
          variants(
              [device] {
                torch::manual_seed(1);
                hookforge::ESPCN m(hookforge::espcn_options{.scale = 2});
                m->to(device);
                return m;
              },
              sr_batches, device),
          s);
}
