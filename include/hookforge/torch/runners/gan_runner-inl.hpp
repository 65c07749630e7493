// hookforge/torch/runners/gan_runner-inl.hpp — the GAN runner's steps that depend on none of
// its template arguments, and its context's and score accumulator's members: included by
// gan_runner.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/runners/gan_runner.hpp"

namespace hookforge {

HOOKFORGE_INLINE epoch_scores gan_score_accumulator::means() const {
  auto out = d.means();
  for (auto& [name, value] : g.means()) out[name] = value;
  for (auto& [name, value] : metrics.means()) out[name] = value;
  return out;
}

HOOKFORGE_INLINE void gan_score_accumulator::reset() {
  d.reset();
  g.reset();
  metrics.reset();
}

HOOKFORGE_INLINE std::vector<torch::Tensor> GANContext::d_parameters() const {
  return d_optimizer ? optimizer_parameters(*d_optimizer) : std::vector<torch::Tensor>{};
}

HOOKFORGE_INLINE std::vector<torch::Tensor> GANContext::g_parameters() const {
  return g_optimizer ? optimizer_parameters(*g_optimizer) : std::vector<torch::Tensor>{};
}

HOOKFORGE_INLINE std::vector<torch::Tensor> GANContext::parameters() const {
  if (phase == gan_phase::discriminator) return d_parameters();
  if (phase == gan_phase::generator) return g_parameters();
  auto all = d_parameters();
  auto g = g_parameters();
  all.insert(all.end(), g.begin(), g.end());
  return all;
}

namespace detail {

HOOKFORGE_INLINE requires_grad_off::requires_grad_off(std::vector<torch::Tensor> params) {
  saved_.reserve(params.size());
  for (auto& p : params) {
    saved_.emplace_back(p, p.requires_grad());
    p.requires_grad_(false);
  }
}

HOOKFORGE_INLINE requires_grad_off::~requires_grad_off() {
  for (auto& [p, was] : saved_) p.requires_grad_(was);
}

HOOKFORGE_INLINE std::pair<torch::optim::Optimizer*, torch::optim::Optimizer*>
require_gan_optimizers(torch::optim::Optimizer* d_optimizer, torch::optim::Optimizer* g_optimizer) {
  std::string missing;
  if (d_optimizer == nullptr) missing = "the discriminator optimizer (d_optimizer)";
  if (g_optimizer == nullptr)
    missing +=
        std::string(missing.empty() ? "" : " and ") + "the generator optimizer (g_optimizer)";
  if (!missing.empty())
    throw std::invalid_argument("GANTrainingRunner: " + missing +
                                (d_optimizer || g_optimizer ? " is" : " are") +
                                " missing (null); a GAN runner needs one optimiser per network");
  if (d_optimizer == g_optimizer)
    throw std::invalid_argument(
        "GANTrainingRunner: d_optimizer and g_optimizer are the same object; give each network "
        "its own");
  return {d_optimizer, g_optimizer};
}

HOOKFORGE_INLINE void begin_gan_batch(GANContext& ctx, std::int64_t index, Entry&& input,
                                      std::int64_t global_step, const gan_options& options) {
  ctx.batch_idx = index;
  ctx.global_step = global_step;
  ctx.entry = on_device(std::move(input), options.device);
  ctx.phase = gan_phase::none;
  ctx.run_d = true;
  ctx.run_g = (global_step + 1) % options.step_ratio == 0;
  ctx.d_extra_losses.clear();
  ctx.g_extra_losses.clear();
  ctx.d_losses.clear();
  ctx.g_losses.clear();
  ctx.d_loss = torch::Tensor();
  ctx.g_loss = torch::Tensor();
  ctx.d_stepped = false;
  ctx.g_stepped = false;
  ctx.batch_scores.clear();
}

HOOKFORGE_INLINE void gan_backward(const torch::Tensor& loss, GradScaler& scaler,
                                   torch::optim::Optimizer& optimizer) {
  optimizer.zero_grad();
  scaler.scale(loss).backward();
  scaler.unscale_(optimizer);  // hooks see and edit true gradients
}

HOOKFORGE_INLINE bool gan_update(bool take, GradScaler& scaler, torch::optim::Optimizer& optimizer,
                                 std::int64_t& steps) {
  bool stepped = false;
  if (take) {
    stepped = scaler.step(optimizer);
    if (stepped) ++steps;
  }
  scaler.update();  // also closes the scaler's iteration when a hook vetoed the step
  return stepped;
}

HOOKFORGE_INLINE void record_gan_scores(GANContext& ctx, const loss_terms& losses,
                                        const torch::Tensor& total, const std::string& network,
                                        score_accumulator& running) {
  std::map<std::string, torch::Tensor> scores;
  for (const auto& [name, value] : losses)
    if (name != "loss") scores[network + "." + name] = value.detach();
  scores[network + "_loss"] = total.detach();
  running.add(scores, static_cast<std::int64_t>(ctx.entry.batch_size()));
  for (auto& [name, value] : scores) ctx.batch_scores[name] = value;
}

HOOKFORGE_INLINE void record_gan_metrics(GANContext& ctx, const gan_options& options,
                                         std::string_view runner) {
  if (options.metrics.empty()) return;
  const bool aliased = options.fake_field == "output" && options.real_field == "target";
  Entry renamed;
  if (!aliased) {
    renamed = ctx.entry;  // shares the tensors
    renamed.set("output", ctx.entry.at(options.fake_field));
    renamed.set("target", ctx.entry.at(options.real_field));
  }
  std::map<std::string, torch::Tensor> values;
  record_metrics(options.metrics, aliased ? ctx.entry : renamed, values, runner);
  ctx.running_scores.metrics.add(values, static_cast<std::int64_t>(ctx.entry.batch_size()));
  for (auto& [name, value] : values) ctx.batch_scores[name] = value;
}

}  // namespace detail

}  // namespace hookforge
