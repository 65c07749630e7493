// hookforge::run on several ranks: the process group of a run (hookforge::distributed), the
// data-parallel hooks the components get (include/hookforge/run/distributed.hpp) and their
// registrations for configs (GradientAllReduce, ScoreAllReduce, StopAgreement). Compiled
// with HOOKFORGE_RUN_HAS_DISTRIBUTED when hookforge::distributed is available (CMakeLists.txt);
// without it, a run of one rank works as before and a run of several is refused with a message.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/section.hpp"
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/registrations.hpp"

namespace hookforge::run {

distributed_settings read_distributed(config::builder& b) {
  using s = distributed_settings;
  constexpr auto positive = [](const double& x) { return x > 0; };
  return config::read_section<s>(
      b, "distributed", config::field("backend", &s::backend),
      config::field("data_parallel", &s::data_parallel),
      config::field("bucket_mb", &s::bucket_mb).check(positive, "a bucket size in MiB > 0"),
      config::field("buffers", &s::buffers),
      config::field("join_timeout", &s::join_timeout_s).check(positive, "a time in seconds > 0"),
      config::field("timeout", &s::timeout_s).check(positive, "a time in seconds > 0"),
      config::field("requeue_signal", &s::requeue_signal));
}

}  // namespace hookforge::run

#if HOOKFORGE_RUN_HAS_DISTRIBUTED
#include "hookforge/config/register.hpp"
#include "hookforge/distributed/gradient_allreduce.hpp"
#include "hookforge/distributed/init.hpp"
#include "hookforge/distributed/score_allreduce.hpp"
#include "hookforge/distributed/agreement.hpp"
#include "hookforge/distributed/stop_agreement.hpp"
#include "hookforge/run/hooks.hpp"
#include "hookforge/run/settings.hpp"

namespace cfg = hookforge::config;
namespace dist = hookforge::distributed;

namespace hookforge::config::kinds {
/// GradientAllReduce: TrainingEpochRunner (a GAN's two optimisers are not averaged yet).
using gradient_hook = hook_kind<TrainingContext>;
/// ScoreAllReduce: the epoch runners with scores.
using score_hook = hook_kind<TrainingContext, InferenceContext>;
}  // namespace hookforge::config::kinds

namespace {

/// This process's group: a single process until join_from_env.
dist::process_group& group() {
  static dist::process_group g;
  return g;
}

/// The GradientAllReduce instances of this run (for the summary).
std::vector<std::shared_ptr<dist::GradientAllReduce>>& gradient_hooks() {
  static std::vector<std::shared_ptr<dist::GradientAllReduce>> hooks;
  return hooks;
}

std::shared_ptr<dist::GradientAllReduce> make_gradient_allreduce(double bucket_mb,
                                                                 bool broadcast_at_start,
                                                                 dist::buffer_sync buffers) {
  if (!(bucket_mb > 0))
    throw std::invalid_argument(
        fmt::format("GradientAllReduce: bucket_mb must be > 0, got {}", bucket_mb));
  auto hook = std::make_shared<dist::GradientAllReduce>(
      group(),
      dist::gradient_allreduce_options{
          .bucket_mb = bucket_mb, .broadcast_at_start = broadcast_at_start, .buffers = buffers});
  gradient_hooks().push_back(hook);
  return hook;
}

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace

const dist::gradient_allreduce_options gradient_defaults{};
HOOKFORGE_REGISTER_AS(gradient_hook, "GradientAllReduce", dist::GradientAllReduce,
                      cfg::factory(&make_gradient_allreduce),
                      cfg::arg<double>("bucket_mb", gradient_defaults.bucket_mb),
                      cfg::arg<bool>("broadcast_at_start", gradient_defaults.broadcast_at_start),
                      cfg::arg<dist::buffer_sync>("buffers", gradient_defaults.buffers));
HOOKFORGE_REGISTER_AS(score_hook, "ScoreAllReduce", dist::ScoreAllReduce,
                      cfg::factory([] { return std::make_shared<dist::ScoreAllReduce>(group()); }));
HOOKFORGE_REGISTER_AS(trainer_hook, "StopAgreement", dist::StopAgreement,
                      cfg::factory([] { return std::make_shared<dist::StopAgreement>(group()); }));

namespace hookforge::run::detail {

bool have_dist() { return true; }

void join_from_env(const distributed_settings& s) {
  dist::init_options defaults;
  defaults.backend = std::string(name_of(s.backend));
  defaults.join_timeout = millis(s.join_timeout_s);
  defaults.timeout = millis(s.timeout_s);
  group() = dist::init(dist::options_from_env(defaults));
  settings().agreement = dist::agreement(group());
}

void set_up_data_parallel(const distributed_settings& s) {
  auto& makers = data_parallel_hooks();
  makers = {};
  if (!s.data_parallel) return;
  const auto buffers = s.buffers;
  const double bucket_mb = s.bucket_mb;
  makers.training = [bucket_mb, buffers] {
    std::vector<any_hook<TrainingContext>> out;
    out.emplace_back(make_gradient_allreduce(bucket_mb, true, buffers));
    out.emplace_back(std::make_shared<dist::ScoreAllReduce>(group()));
    return out;
  };
  makers.validation = [] {
    std::vector<any_hook<InferenceContext>> out;
    out.emplace_back(std::make_shared<dist::ScoreAllReduce>(group()));
    return out;
  };
  makers.trainer = [] {
    std::vector<any_hook<TrainerContext>> out;
    out.emplace_back(std::make_shared<dist::StopAgreement>(group()));
    return out;
  };
}

bool on_any_rank(bool mine) {
  auto flag = torch::tensor({mine ? 1 : 0}, torch::kInt);
  group().allreduce(flag, dist::reduce_op::max);
  return flag.item<int>() != 0;
}

std::string data_parallel_summary() {
  double seconds = 0;
  std::int64_t updates = 0;
  for (const auto& h : gradient_hooks()) {
    seconds += h->seconds();
    updates += h->updates();
  }
  if (updates == 0) return {};
  return fmt::format(
      "gradient all-reduce: {:.2f} s over {} updates ({:.2f} ms per update), {} ranks ({})",
      seconds, updates, 1000 * seconds / static_cast<double>(updates), group().world_size(),
      group().backend_name());
}

void link_distributed() {}

}  // namespace hookforge::run::detail

#else  // no hookforge::distributed

namespace hookforge::run::detail {

bool have_dist() { return false; }

void join_from_env(const distributed_settings&) {
  throw std::invalid_argument(
      "this hookforge-run was built without hookforge::distributed (LibTorch's c10d and Gloo's "
      "headers, Debian: "
      "libgloo-dev), so it runs one rank only");
}

void set_up_data_parallel(const distributed_settings& s) { join_from_env(s); }

bool on_any_rank(bool mine) { return mine; }

std::string data_parallel_summary() { return {}; }

void link_distributed() {}

}  // namespace hookforge::run::detail

#endif
