// ProfilerHook: LibTorch's profiler over a schedule of training steps; its Chrome traces read
// back as JSON (one per cycle, the recorded steps as ProfilerStep#<n> ranges, HookProfiler's
// handlers as hook ranges) and its table of self CPU times.

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../torch/fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "hookforge/hooks/hook_profiler.hpp"
#include "hookforge/hooks/loss_logger.hpp"
#include "hookforge/hooks/profiler_hook.hpp"
#include "../torch/file_testing.hpp"

using namespace tfx;
using namespace hookforge;

#if HOOKFORGE_HAS_KINETO_TRACES

namespace {

/// The names of a trace's ranges (user annotations), in order.
std::vector<std::string> ranges_in(const std::filesystem::path& trace) {
  std::ifstream in(trace);
  const auto json = nlohmann::json::parse(in);
  std::vector<std::string> names;
  for (const auto& e : json.at("traceEvents"))
    if (e.value("cat", "") == "user_annotation") names.push_back(e.at("name"));
  return names;
}

std::vector<std::string> starting_with(const std::vector<std::string>& names,
                                       const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (n.starts_with(prefix)) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("ProfilerHook writes one trace per cycle, its steps and the hooks as ranges",
          "[profiler_hook]") {
  tfx::temp_dir dir("profiler_hook");
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  std::ostringstream table;
  ProfilerHook profiler({.wait = 1,
                         .warmup = 1,
                         .active = 2,
                         .repeat = 2,
                         .out_dir = dir.path / "traces",
                         .worker_name = "rank0",
                         .stream = &table});
  HookProfiler timings({.print_at_end = false});
  std::ostringstream rows;
  TrainingEpochRunner train(
      sgd, {}, hookforge::ref(profiler),
      timings.wrap(LossLogger({.interval = 1, .out_dir = dir.path, .stream = &rows})));
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val, {.epochs = 1, .work_dir = dir.path}, hookforge::ref(profiler));
  const auto data = regression_data(10, 4);
  trainer.fit(data, data, mse);

  // Cycles of wait 1, warm-up 1, active 2: steps 2-3 and 6-7 recorded.
  const auto& traces = profiler.traces();
  REQUIRE(traces.size() == 2);
  for (const auto& t : traces) {
    CHECK(t.parent_path() == dir.path / "traces");
    CHECK(t.filename().string().starts_with("rank0."));
    CHECK(t.filename().string().ends_with(".pt.trace.json"));
  }
  const auto first = ranges_in(traces[0]), second = ranges_in(traces[1]);
  CHECK(starting_with(first, "ProfilerStep#") ==
        std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3"});
  CHECK(starting_with(second, "ProfilerStep#") ==
        std::vector<std::string>{"ProfilerStep#6", "ProfilerStep#7"});
  // The timed LossLogger's step rows, once per recorded step, inside the steps.
  CHECK(starting_with(first, "hook: LossLogger.log@on_post_step").size() == 2);
  CHECK(table.str().find("top ops by self CPU time") != std::string::npos);
  CHECK(table.str().find("aten::") != std::string::npos);
  // Nothing half-written is left.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path / "traces"))
    CHECK(entry.path().extension() == ".json");
}

TEST_CASE("ProfilerHook writes a window still open when training ends", "[profiler_hook]") {
  tfx::temp_dir dir("profiler_hook_end");
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  ProfilerHook profiler({.wait = 0, .warmup = 1, .active = 5, .row_limit = 0});
  TrainingEpochRunner train(sgd, {}, hookforge::ref(profiler));
  ValidationEpochRunner val(inference_options{});
  Trainer trainer(model, train, val, {.epochs = 2, .work_dir = dir.path}, hookforge::ref(profiler));
  const auto data = regression_data(2, 4);
  trainer.fit(data, data, mse);
  // Steps 1-3 recorded, of the 5 the window wanted; under <work_dir>/profiler.
  REQUIRE(profiler.traces().size() == 1);
  CHECK(profiler.traces()[0].parent_path() == dir.path / "profiler");
  CHECK(starting_with(ranges_in(profiler.traces()[0]), "ProfilerStep#") ==
        std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"});
}

TEST_CASE("ProfilerHook refuses a schedule that records nothing", "[profiler_hook]") {
  CHECK_THROWS_WITH(ProfilerHook({.active = 0}), "ProfilerHook: active must be >= 1, got 0");
  CHECK_THROWS_WITH(ProfilerHook({.wait = -1}), "ProfilerHook: wait must be >= 0, got -1");
}

#else

TEST_CASE("ProfilerHook says that this LibTorch has no Kineto traces", "[profiler_hook]") {
  CHECK_THROWS_WITH(ProfilerHook(), Catch::Contains("USE_KINETO=OFF"));
}

#endif
