// What a DataLoader's batch costs, by the path it takes (docs/benchmarks.md, "Where the rest of the
// gap went").
//
// The default job's training data: ProceduralImages, cached, 4096 samples of 48 x 48, batches
// of 16, shuffled. One benchmark iteration is one epoch of 256 batches; times are reported
// per batch. Variants:
//   by hand    what benchmarks/peers/plain_loop.cpp does: index_select of the stacked
//              images' input and target (two fields, no Entry)
//   gathered   the DataLoader on ProceduralImages: get_batch, one index_select per field
//              (input, target, bicubic)
//   gathered, no bicubic   the same with `bicubic = false`, as the default job's training set:
//              input and target, the fields by hand gathers
//   stacked    the DataLoader on the same data with get_batch hidden: 16 get() and one
//              torch::stack per field, the path of a dataset without get_batch
// Run with --benchmark_repetitions=N (default 15; interleaved): the summary prints each
// variant's median per batch.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/torch/data/loader.hpp"
#include "hookforge/torch/data/procedural_images.hpp"

namespace {

constexpr std::int64_t kBatch = 16;

const hookforge::ProceduralImages& images() {
  static const hookforge::ProceduralImages data(
      {.count = 4096, .size = 48, .scale = 2, .seed = 1, .cache = true});
  return data;
}

const hookforge::ProceduralImages& images_without_bicubic() {
  static const hookforge::ProceduralImages data(
      {.count = 4096, .size = 48, .scale = 2, .seed = 1, .cache = true, .bicubic = false});
  return data;
}

/// ProceduralImages with its get_batch hidden: the loader stacks samples one by one.
struct one_by_one {
  const hookforge::ProceduralImages* data;
  std::size_t size() const { return data->size(); }
  hookforge::Entry get(std::size_t i) const { return data->get(i); }
};

template <class Dataset>
void BM_loader(benchmark::State& state, Dataset data) {
  torch::set_num_threads(1);
  hookforge::DataLoader loader(data, {.batch_size = kBatch, .shuffle = true, .seed = 0});
  std::int64_t epoch = 0;
  for (auto _ : state) {
    loader.set_epoch(epoch++);
    for (const auto& batch : loader) benchmark::DoNotOptimize(batch.at("input").data_ptr());
  }
  state.counters["batches"] = static_cast<double>(loader.size());
}

void BM_by_hand(benchmark::State& state) {
  torch::set_num_threads(1);
  std::vector<std::size_t> all(images().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto stacked = images().get_batch(all);  // every image, as the plain loop keeps them
  const auto input = stacked.at("input"), target = stacked.at("target");
  const std::int64_t n = input.size(0);
  auto generator = at::detail::createCPUGenerator(0);
  for (auto _ : state) {
    const auto order = torch::randperm(n, generator);
    for (std::int64_t b = 0; b < n; b += kBatch) {
      const auto index = order.slice(0, b, std::min(b + kBatch, n));
      benchmark::DoNotOptimize(input.index_select(0, index).data_ptr());
      benchmark::DoNotOptimize(target.index_select(0, index).data_ptr());
    }
  }
  state.counters["batches"] = static_cast<double>((n + kBatch - 1) / kBatch);
}

/// The usual output, then each variant's median time per batch.
class PerBatchReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs)
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        per_batch_[run.run_name.function_name].push_back(run.GetAdjustedRealTime() /
                                                         run.counters.at("batches"));
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n| variant | median per batch (us) |\n|---|---:|\n");
    for (auto& [name, times] : per_batch_) {
      std::sort(times.begin(), times.end());
      std::printf("| %s | %.1f |\n", name.c_str(), times[times.size() / 2]);
    }
  }

 private:
  std::map<std::string, std::vector<double>> per_batch_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("batch/by hand", BM_by_hand)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("batch/gathered", BM_loader<hookforge::ProceduralImages>, images())
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("batch/gathered, no bicubic", BM_loader<hookforge::ProceduralImages>,
                               images_without_bicubic())
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("batch/stacked", BM_loader<one_by_one>, one_by_one{&images()})
      ->Unit(benchmark::kMicrosecond);
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=15",
              interleave = "--benchmark_enable_random_interleaving=true";
  if (std::none_of(argv + 1, argv + argc,
                   [](std::string_view a) { return a.starts_with("--benchmark_repetitions"); }))
    args.push_back(reps.data());
  args.push_back(interleave.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  PerBatchReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}
