// SyncAudit: the operators that would make the host wait for a GPU, found on the CPU and
// named by step, phase or point, and hook. The stock training step with the built-in hooks
// synchronises only where their options say (ProgressBar's refresh, LossLogger's interval).

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../torch/fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/hooks/ema.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "hookforge/hooks/hook_profiler.hpp"
#include "hookforge/hooks/sync_audit.hpp"
#include "hookforge/torch/amp/grad_scaler.hpp"
#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/data/loader.hpp"
#include "hookforge/torch/optim/fused_adam.hpp"
#include "../torch/file_testing.hpp"
#include "../torch/skip.hpp"

using namespace tfx;
using namespace hookforge;

namespace {

/// A hook that reads the loss on the host at every step: the mistake the audit finds.
struct LossReader {
  double last = 0;
  void read(TrainingContext& ctx) { last = ctx.loss.item<double>(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(read, points::on_post_step));
};

/// The sites within training steps (the epoch's scores are read once an epoch, outside).
std::vector<sync_site> in_training_steps(const SyncAudit& audit) {
  std::vector<sync_site> sites;
  for (const auto& s : audit.sites())
    if (s.step == "train") sites.push_back(s);
  return sites;
}

/// A hook that copies the output to the host at every step: on a GPU, a blocking copy.
struct OutputToHost {
  void copy(TrainingContext& ctx) { (void)ctx.entry.at("output").cpu(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(copy, points::on_post_step));
};

/// Whether FusedAdam runs on CPU tensors here (LibTorch 2.4 on; Debian's 1.13 has no kernel).
bool fused_adam_on_cpu() { return compat::has_kernel("aten::_fused_adam_", torch::kCPU); }

std::set<std::string> operators(const SyncAudit& audit) {
  std::set<std::string> ops;
  for (const auto& s : audit.sites()) ops.insert(s.op);
  return ops;
}

}  // namespace

TEST_CASE("SyncAudit names the hook that calls item() at every step", "[sync_audit]") {
  torch::manual_seed(1);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  const auto data = regression_data(6, 4);

  SECTION("a handler a HookProfiler wraps: by its name") {
    SyncAudit audit({.print_at_end = false});
    HookProfiler names({.print_at_end = false});
    TrainingEpochRunner train(sgd, {}, names.wrap(LossReader{}));
    train.run_epoch(model, data, 0, mse);
    const auto sites = in_training_steps(audit);
    REQUIRE(sites.size() == 1);
    CHECK(sites[0].where == "on_post_step");
    CHECK(sites[0].hook.ends_with("LossReader.read@on_post_step"));
    CHECK(sites[0].op == "aten::item");  // its own _local_scalar_dense is part of it
    CHECK(sites[0].calls == 6);
    CHECK(audit.training_steps() == 6);
    CHECK_THAT(audit.report(), Catch::Contains("2 places synchronise the host") &&
                                   Catch::Contains("aten::item") && Catch::Contains("1.000"));
    // the other: the epoch's mean loss, read once as the epoch ends
    const auto all = audit.sites();
    CHECK(std::any_of(all.begin(), all.end(), [](const sync_site& s) {
      return s.step.empty() && s.where == "epoch scores" && s.calls == 1;
    }));
  }
  SECTION("an unwrapped hook: by its point") {
    SyncAudit audit({.print_at_end = false});
    TrainingEpochRunner train(sgd, {}, LossReader{});
    train.run_epoch(model, data, 0, mse);
    const auto sites = in_training_steps(audit);
    REQUIRE(sites.size() == 1);
    CHECK(std::tie(sites[0].step, sites[0].where, sites[0].hook, sites[0].op) ==
          std::tuple<std::string, std::string, std::string, std::string>("train", "on_post_step",
                                                                         "", "aten::item"));
  }
  SECTION("one audit at a time; none after it ends") {
    {
      SyncAudit audit({.print_at_end = false});
      CHECK_THROWS_WITH(SyncAudit({.print_at_end = false}),
                        Catch::Contains("another SyncAudit observes this process"));
    }
    SyncAudit later({.print_at_end = false});
    CHECK(later.sites().empty());
  }
}

TEST_CASE("SyncAudit counts the operators that synchronise on CUDA, each once", "[sync_audit]") {
  SyncAudit audit({.print_at_end = false});
  const auto t = torch::tensor({0.0f, 1.0f, 2.0f, 3.0f});
  const auto mask = t > 1;
  {
    const hookforge::detail::step_range step(range_kind::step, "train");
    (void)t.sum().item<float>();
    (void)t.nonzero();
    (void)torch::masked_select(t, mask);
    (void)at::_unique2(t);
    (void)at::equal(t, t);
    (void)at::where(mask);
    (void)torch::repeat_interleave(torch::tensor({1, 2}));
    c10::List<c10::optional<at::Tensor>> by_mask;
    by_mask.push_back(mask);
    (void)at::index(t, by_mask);
  }
  CHECK(operators(audit) == std::set<std::string>{"aten::item", "aten::nonzero",
                                                  "aten::masked_select", "aten::_unique2",
                                                  "aten::equal", "aten::where (condition only)",
                                                  "aten::repeat_interleave (no output_size)",
                                                  "aten::index (boolean mask)"});
  for (const auto& s : audit.sites()) CHECK(s.calls == 1);

  audit.reset();
  {  // what stays on the device
    const auto positions = torch::tensor({0, 2});
    (void)(t * 2 + 1).sum();
    (void)t.index_select(0, positions);
    (void)t.masked_fill(mask, 0);
    (void)at::where(mask, t, -t);
    (void)torch::repeat_interleave(torch::tensor({1, 2}), /*output_size=*/3);
    c10::List<c10::optional<at::Tensor>> by_positions;
    by_positions.push_back(positions);
    (void)at::index(t, by_positions);
    (void)t.to(torch::kCPU).clone();  // no device here: a copy only a GPU run sees
  }
  CHECK(audit.sites().empty());
}

TEST_CASE("The training step with the built-in hooks synchronises only at their intervals",
          "[sync_audit]") {
  tfx::temp_dir dir("sync_audit");
  torch::manual_seed(2);
  Regressor model;
  // FusedAdam where it runs on the CPU; on LibTorch 1.13, LibTorch's Adam (no sync either).
  std::unique_ptr<torch::optim::Optimizer> adam;
  if (fused_adam_on_cpu())
    adam = std::make_unique<FusedAdam>(model->parameters(), torch::optim::AdamOptions(1e-2));
  else
    adam =
        std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(1e-2));
  std::ostringstream out;
  default_hooks defaults({.progress = {.refresh = 5, .stream = &out},
                          .logger = {.interval = 4, .stream = &out},
                          .checkpoint = {.interval = 1},
                          .summary = std::nullopt});
  HookProfiler names({.print_at_end = false});
  SyncAudit audit({.print_at_end = false});
  TrainingEpochRunner train(*adam, {}, names.wrap(defaults.training()),
                            names.wrap(GradientClip({.max_norm = 1.0})),
                            names.wrap(EMA(model, {.momentum = 0.1})));
  ValidationEpochRunner val({}, names.wrap(defaults.validation()));
  Trainer trainer(model, train, val, {.epochs = 2, .work_dir = dir.path},
                  names.wrap(defaults.trainer()));
  const auto data = regression_data(20, 4);
  trainer.fit(data, regression_data(3, 4, 0.0, 7), mse);

  // Each site of a training step, operator by operator: ProgressBar reads the loss every
  // 5 batches (20 / 5 = 4 an epoch), LossLogger's step row every 4 (5 an epoch), nothing
  // else: the runner's phases, GradientClip, EMA, FusedAdam and IterTimer stay on the device.
  std::vector<std::tuple<std::string, std::string, std::int64_t>> in_steps;
  for (const auto& s : in_training_steps(audit)) in_steps.emplace_back(s.hook, s.op, s.calls);
  std::sort(in_steps.begin(), in_steps.end());
  INFO(audit.report());
  REQUIRE(in_steps.size() == 2);
  CHECK(std::get<0>(in_steps[0]).ends_with("LossLogger.log@on_post_step"));
  CHECK(std::get<1>(in_steps[0]) == "aten::item");
  CHECK(std::get<2>(in_steps[0]) == 2 * 5);
  CHECK(std::get<0>(in_steps[1]).ends_with("ProgressBar.step@on_post_step"));
  CHECK(std::get<1>(in_steps[1]) == "aten::item");
  CHECK(std::get<2>(in_steps[1]) == 2 * 4);
  CHECK(audit.training_steps() == 40);
  // Outside the training steps: each epoch's mean scores, and the validation bar's refresh.
  for (const auto& s : audit.sites()) {
    if (s.step == "train") continue;
    CHECK(s.op == "aten::item");
    CHECK(((s.step.empty() && s.where == "epoch scores") ||
           (s.step == "eval" && s.hook.ends_with("ProgressBar.step@on_post_step"))));
  }
}

TEST_CASE("GradScaler with FusedAdam never reads the device, with SGD once a step",
          "[sync_audit]") {
  torch::manual_seed(3);
  Regressor model;
  const auto data = regression_data(5, 4);
  auto steps = [&](torch::optim::Optimizer& optimizer) {
    GradScaler scaler;  // enabled, as a float16 CUDA run has it
    SyncAudit audit({.print_at_end = false});
    for (const auto& batch : data) {
      const hookforge::detail::step_range step(range_kind::step, "train");
      Entry e(batch, 1);
      forward_into(model, e);
      optimizer.zero_grad();
      scaler.scale(mse(e)).backward();
      scaler.step(optimizer);
      scaler.update();
    }
    return audit.sites();
  };
  if (fused_adam_on_cpu()) {
    FusedAdam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
    CHECK(steps(adam).empty());
  } else {
    WARN("FusedAdam not checked: this LibTorch has no fused Adam kernel for the CPU");
  }
  torch::optim::SGD sgd(model->parameters(), 1e-3);
  const auto with_sgd = steps(sgd);
  REQUIRE(with_sgd.size() == 1);
  CHECK(with_sgd[0].op == "aten::item");
  CHECK(with_sgd[0].calls == 5);
}

TEST_CASE(
    "CUDA: SyncAudit on the GPU: the hooked mixed-precision step reads the device only at "
    "the hooks' intervals, a hook's .cpu() is a blocking copy",
    "[cuda][sync_audit]") {
  HOOKFORGE_REQUIRE_CUDA();
  const torch::Device cuda0(torch::kCUDA, 0);
  torch::manual_seed(4);
  Regressor model;
  model->to(cuda0);
  FusedAdam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
  tfx::temp_dir dir("sync_audit_cuda");
  std::ostringstream out;
  default_hooks defaults({.progress = {.refresh = 8, .stream = &out},
                          .logger = {.interval = 4, .out_dir = dir.path, .stream = &out}});
  HookProfiler names({.print_at_end = false});
  SyncAudit audit({.print_at_end = false});
  TrainingEpochRunner train(adam, training_options{.mixed_precision = true, .device = cuda0},
                            names.wrap(defaults.training()),
                            names.wrap(GradientClip({.max_norm = 1.0})),
                            names.wrap(EMA(model, {.momentum = 0.1})), names.wrap(OutputToHost{}));
  REQUIRE(train.scaler().is_enabled());
  auto all = regression_data(1, 16 * 32, 0.01, 4).front();
  DataLoader loader(tensor_dataset{{"input", all.at("input")}, {"target", all.at("target")}},
                    {.batch_size = 16, .pin_memory = true});
  train.run_epoch(model, loader, 0, mse);

  INFO(audit.report());
  std::map<std::string, std::int64_t> by_hook;  // "<hook>.<method>@<point> <operator>"
  for (const auto& s : audit.sites()) {
    if (s.where == "epoch scores") continue;  // once, as the epoch ends
    CHECK(s.step == "train");
    by_hook[s.hook.substr(s.hook.rfind(':') + 1) + " " + s.op] += s.calls;
  }
  CHECK(by_hook == std::map<std::string, std::int64_t>{
                       {"LossLogger.log@on_post_step aten::item", 32 / 4},
                       {"OutputToHost.copy@on_post_step aten::copy_ (device to host)", 32},
                       {"ProgressBar.step@on_post_step aten::item", 32 / 8}});
}
