// hookforge/distributed/gradient_allreduce.hpp — GradientAllReduce: data-parallel training as a
// hook.
//
//   auto pg = hookforge::distributed::init_from_env();
//   hookforge::TrainingEpochRunner train(optimizer, {},
//   hookforge::distributed::GradientAllReduce(pg),
//                                        hookforge::GradientClip{1.0});
//
// Each rank runs the same model on its own shard of the data (sharded_sampler); this hook
// makes their updates identical:
//   on_epoch_start    (the first one of this process) every parameter and buffer of the
//                     model is broadcast from rank 0, after checking that every rank's model
//                     has as many tensors and elements; so the ranks start from rank 0's
//                     initialisation, or from the checkpoint every rank loaded.
//   on_post_backward  on batches whose update follows (ctx.optimizer_step_due, so with
//                     gradient accumulation once per update, on the accumulated sum): the
//                     gradients of the optimiser's parameters are packed into buckets of
//                     `bucket_mb` MiB (distributed/bucket.hpp), all-reduced one bucket per
//                     collective, divided by the world size and unpacked. A parameter
//                     without a gradient on some rank counts as zeros there; one without a
//                     gradient on every rank keeps none (the optimiser skips it, as alone).
//   on_epoch_end      with `buffers` = broadcast or average: the model's buffers (BatchNorm
//                     statistics) from rank 0, or averaged (floating ones; others from rank 0).
//
// Agreement. Riding in the first bucket, the hook also ORs two requests over the ranks: a
// vetoed update (ctx.skip_optimizer_step) and a stop (ctx.stop_training). A hook that
// vetoes from what only its rank saw (CheckInvalidLoss, HIGH priority, on its rank's loss)
// therefore vetoes on every rank, and no rank steps while another does not.
//
// Priority ABOVE_NORMAL: after CheckInvalidLoss (HIGH), whose veto it carries, and before
// GradientClip (NORMAL) and the other gradient hooks at the default priority, which then see
// the averaged gradients, the same on every rank (Gloo's allreduce gives every rank the same
// bits), and so decide the same (GradientClip's skip_step). A hook of yours that edits
// gradients before the average gives this a priority below it.
//
// seconds() and updates() tell the time spent in the all-reduce (packing included).
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/nn/module.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/distributed/bucket.hpp"
#include "hookforge/distributed/buffer_sync.hpp"
#include "hookforge/distributed/process_group.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"

namespace hookforge::distributed {

/// What GradientAllReduce does with the model's buffers at each training epoch's end.
struct gradient_allreduce_options {
  double bucket_mb = 25;           ///< MiB per bucket (> 0), as DDP's bucket_cap_mb
  bool broadcast_at_start = true;  ///< parameters and buffers from rank 0 at the first epoch start
  buffer_sync buffers = buffer_sync::off;
};

namespace detail {

/// A context that can name the tensors a rank's model holds.
template <class C>
concept has_model = requires(C& c) {
  { c.model } -> std::convertible_to<torch::nn::Module*>;
};

template <class C>
concept has_parameters = requires(C& c) {
  { c.parameters() } -> std::convertible_to<std::vector<torch::Tensor>>;
};

inline std::vector<torch::Tensor> parameters_and_buffers(torch::nn::Module& module) {
  auto tensors = module.parameters(/*recurse=*/true);
  for (auto& b : module.buffers(/*recurse=*/true)) tensors.push_back(b);
  return tensors;
}

}  // namespace detail

class GradientAllReduce {
 public:
  static constexpr int priority = priority::ABOVE_NORMAL;

  explicit GradientAllReduce(process_group group, gradient_allreduce_options options = {})
      : group_(std::move(group)), options_(options) {
    if (!(options_.bucket_mb > 0))
      throw std::invalid_argument(
          fmt::format("GradientAllReduce: bucket_mb must be > 0, got {}", options_.bucket_mb));
  }

  /// At on_epoch_start: the first time, rank 0's parameters and buffers to every rank.
  template <class C>
    requires detail::has_model<C> || detail::has_parameters<C>
  void broadcast_parameters(C& ctx) {
    if (broadcast_done_ || !options_.broadcast_at_start) return;
    broadcast_done_ = true;
    if (!group_.distributed()) return;
    std::vector<torch::Tensor> tensors = model_tensors(ctx);
    check_same_layout(tensors);
    broadcast_from_rank_zero(tensors);
  }

  /// At on_post_backward, on batches whose update follows: the average gradient everywhere.
  template <hookforge::training_context C>
    requires detail::has_parameters<C>
  void average_gradients(C& ctx) {
    if constexpr (hookforge::single_training_context<C>)
      if (!ctx.optimizer_step_due) return;  // accumulating: average the sum before its update
    if (!group_.distributed()) return;
    const auto started = std::chrono::steady_clock::now();
    torch::NoGradGuard no_grad;

    std::vector<torch::Tensor> params;
    for (auto& p : ctx.parameters())
      if (p.defined() && p.requires_grad()) params.push_back(p);
    const auto n = static_cast<std::int64_t>(params.size());
    std::vector<torch::Tensor> grads(params.size());
    // Control words: one "has a gradient" flag per parameter, then "veto", then "stop".
    auto control = torch::zeros({n + 2}, torch::kFloat);
    auto* flag = control.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) {
      const auto& g = params[i].grad();
      flag[i] = g.defined() ? 1.0f : 0.0f;
      grads[i] = g.defined() ? g : torch::zeros_like(params[i]);
    }
    flag[n] = local_veto(ctx) ? 1.0f : 0.0f;
    flag[n + 1] = local_stop(ctx) ? 1.0f : 0.0f;

    const auto plan = plan_buckets(grads, bucket_bytes());
    torch::Tensor agreed;
    if (plan.empty()) {
      group_.allreduce(control);
      agreed = control;
    }
    const double world = static_cast<double>(group_.world_size());
    for (std::size_t k = 0; k < plan.size(); ++k) {
      auto flat = flatten(grads, plan[k], k == 0 ? control : torch::Tensor());
      group_.allreduce(flat);
      auto body = flat.narrow(0, 0, plan[k].numel);
      body.div_(world);
      unflatten_into(body, grads, plan[k]);
      if (k == 0) agreed = flat.narrow(0, plan[k].numel, n + 2).to(torch::kCPU, torch::kFloat);
    }
    const auto* votes = agreed.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i)
      if (!params[i].grad().defined() && votes[i] > 0) params[i].mutable_grad() = grads[i];
    if (votes[n] > 0) hookforge::skip_update(ctx);
    if constexpr (requires { ctx.stop_training = true; })
      if (votes[n + 1] > 0) ctx.stop_training = true;

    last_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    seconds_ += last_seconds_;
    ++updates_;
  }

  /// At on_epoch_end (training runner): the buffers, as `options.buffers` says.
  template <class C>
  void sync_buffers(C& ctx) {
    if (options_.buffers == buffer_sync::off || !group_.distributed()) return;
    if constexpr (detail::has_model<C>) {
      if (ctx.model == nullptr) return;
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> averaged, broadcast;
      for (auto& b : ctx.model->buffers(/*recurse=*/true)) {
        if (!b.defined()) continue;
        (options_.buffers == buffer_sync::average && b.is_floating_point() ? averaged : broadcast)
            .push_back(b);
      }
      for (const auto& bucket : plan_buckets(averaged, bucket_bytes())) {
        auto flat = flatten(averaged, bucket);
        group_.allreduce(flat);
        flat.div_(static_cast<double>(group_.world_size()));
        unflatten_into(flat, averaged, bucket);
      }
      broadcast_from_rank_zero(broadcast);
    }
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(broadcast_parameters, points::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(average_gradients, points::on_post_backward),
                          HOOKFORGE_HOOKS_INTO(sync_buffers, points::on_epoch_end));

  /// Seconds spent averaging gradients: in all, and in the last update.
  double seconds() const noexcept { return seconds_; }
  double last_seconds() const noexcept { return last_seconds_; }
  /// Updates whose gradients were averaged.
  std::int64_t updates() const noexcept { return updates_; }
  const process_group& group() const noexcept { return group_; }
  const gradient_allreduce_options& options() const noexcept { return options_; }

 private:
  std::size_t bucket_bytes() const {
    return static_cast<std::size_t>(options_.bucket_mb * 1024.0 * 1024.0);
  }

  /// Rank 0's values of `tensors`, in place on every rank, a bucket per collective.
  void broadcast_from_rank_zero(std::vector<torch::Tensor>& tensors) const {
    torch::NoGradGuard no_grad;
    for (const auto& b : plan_buckets(tensors, bucket_bytes())) {
      auto flat = flatten(tensors, b);
      group_.broadcast(flat, 0);
      if (!group_.is_rank_zero()) unflatten_into(flat, tensors, b);
    }
  }

  template <class C>
  static std::vector<torch::Tensor> model_tensors(C& ctx) {
    if constexpr (detail::has_model<C>)
      if (ctx.model != nullptr) return detail::parameters_and_buffers(*ctx.model);
    if constexpr (detail::has_parameters<C>)
      return ctx.parameters();
    else
      return {};
  }

  /// Every rank's model has as many tensors and elements as this one's, else an error on every
  /// rank.
  void check_same_layout(const std::vector<torch::Tensor>& tensors) const {
    std::int64_t count = 0, elements = 0;
    for (const auto& t : tensors)
      if (t.defined()) ++count, elements += t.numel();
    auto mine = torch::tensor({count, elements, -count, -elements}, torch::kLong);
    auto extremes = mine.clone();
    group_.allreduce(extremes, reduce_op::max);
    const auto* e = extremes.data_ptr<std::int64_t>();
    if (e[0] != count || e[1] != elements || -e[2] != count || -e[3] != elements)
      throw error(
          fmt::format("GradientAllReduce: the ranks' models differ: rank {} has {} tensors of {} "
                      "elements, but across the "
                      "ranks there are {} to {} tensors and {} to {} elements; every rank must "
                      "build the same model",
                      group_.rank(), count, elements, -e[2], e[0], -e[3], e[1]));
  }

  template <class C>
  static bool local_veto(const C& ctx) {
    if constexpr (hookforge::single_training_context<C>)
      return ctx.skip_optimizer_step;
    else
      return false;
  }
  template <class C>
  static bool local_stop(const C& ctx) {
    if constexpr (requires { ctx.stop_training; })
      return ctx.stop_training;
    else
      return false;
  }

  process_group group_;
  gradient_allreduce_options options_;
  bool broadcast_done_ = false;
  double seconds_ = 0;
  double last_seconds_ = 0;
  std::int64_t updates_ = 0;
};

}  // namespace hookforge::distributed
