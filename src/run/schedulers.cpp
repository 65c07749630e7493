// The schedulers and stop conditions a run's config can name. Every scheduler entry takes
// `interval: epoch | step` beside its own parameters: the Trainer steps it after each epoch
// or after each optimiser update (OneCycleLR's default is step, every other's epoch;
// ReduceLROnPlateau refuses step).
// link_schedulers() is called by hookforge::run::main so that this object file, and with it
// the registrations, is linked from the static library.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hookforge/run/optimizer.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/scheduler.hpp"
#include "hookforge/run/values.hpp"

namespace cfg = hookforge::config;
namespace run = hookforge::run;
using namespace hookforge;

namespace {
using optimizer_ptr = std::shared_ptr<torch::optim::Optimizer>;
using schedule_list = std::vector<std::shared_ptr<lr_scheduler>>;

/// A scheduler of kind S over `o`, stepped by `interval`, keeping `o` alive.
template <class S, class... A>
std::shared_ptr<S> scheduler(const char* who, optimizer_ptr o, schedule_interval interval,
                             A&&... args) {
  if (!o) throw std::invalid_argument(std::string(who) + ": optimizer must be given");
  auto s = std::make_shared<S>(*o, std::forward<A>(args)...);
  s->set_interval(interval);
  return run::keep_alive(std::move(s), o);
}

/// The `interval` every scheduler entry takes.
auto interval_arg(schedule_interval fallback = schedule_interval::epoch) {
  return cfg::arg<schedule_interval>("interval", fallback);
}
}  // namespace

HOOKFORGE_REGISTER(scheduler, ConstantLR,
                   cfg::factory([](optimizer_ptr o, double factor, std::int64_t total_iters,
                                   schedule_interval interval) {
                     return scheduler<ConstantLR>("ConstantLR", std::move(o), interval, factor,
                                                  total_iters);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"),
                   cfg::arg<double>("factor", ConstantLR::default_factor),
                   cfg::arg<std::int64_t>("total_iters", ConstantLR::default_total_iters),
                   interval_arg());
HOOKFORGE_REGISTER(scheduler, CosineAnnealingLR,
                   cfg::factory([](optimizer_ptr o, std::int64_t T_max, double eta_min,
                                   schedule_interval interval) {
                     return scheduler<CosineAnnealingLR>("CosineAnnealingLR", std::move(o),
                                                         interval, T_max, eta_min);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<std::int64_t>("T_max"),
                   cfg::arg<double>("eta_min", CosineAnnealingLR::default_eta_min), interval_arg());
HOOKFORGE_REGISTER(scheduler, CosineAnnealingWarmRestarts,
                   cfg::factory([](optimizer_ptr o, std::int64_t T_0, std::int64_t T_mult,
                                   double eta_min, schedule_interval interval) {
                     return scheduler<CosineAnnealingWarmRestarts>("CosineAnnealingWarmRestarts",
                                                                   std::move(o), interval, T_0,
                                                                   T_mult, eta_min);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<std::int64_t>("T_0"),
                   cfg::arg<std::int64_t>("T_mult", CosineAnnealingWarmRestarts::default_T_mult),
                   cfg::arg<double>("eta_min", CosineAnnealingWarmRestarts::default_eta_min),
                   interval_arg());
HOOKFORGE_REGISTER(scheduler, ExponentialLR,
                   cfg::factory([](optimizer_ptr o, double gamma, schedule_interval interval) {
                     return scheduler<ExponentialLR>("ExponentialLR", std::move(o), interval,
                                                     gamma);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<double>("gamma"), interval_arg());
HOOKFORGE_REGISTER(scheduler, LinearLR,
                   cfg::factory([](optimizer_ptr o, double start_factor, double end_factor,
                                   std::int64_t total_iters, schedule_interval interval) {
                     return scheduler<LinearLR>("LinearLR", std::move(o), interval, start_factor,
                                                end_factor, total_iters);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"),
                   cfg::arg<double>("start_factor", LinearLR::default_start_factor),
                   cfg::arg<double>("end_factor", LinearLR::default_end_factor),
                   cfg::arg<std::int64_t>("total_iters", LinearLR::default_total_iters),
                   interval_arg());
HOOKFORGE_REGISTER(scheduler, MultiStepLR,
                   cfg::factory([](optimizer_ptr o, std::vector<std::int64_t> milestones,
                                   double gamma, schedule_interval interval) {
                     return scheduler<MultiStepLR>("MultiStepLR", std::move(o), interval,
                                                   std::move(milestones), gamma);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"),
                   cfg::arg<std::vector<std::int64_t>>("milestones"),
                   cfg::arg<double>("gamma", MultiStepLR::default_gamma), interval_arg());
const one_cycle_options one_cycle_defaults{};
HOOKFORGE_REGISTER(scheduler, OneCycleLR,
                   cfg::factory([](optimizer_ptr o, double max_lr, std::int64_t total_steps,
                                   std::int64_t epochs, std::int64_t steps_per_epoch,
                                   double pct_start, std::string anneal_strategy,
                                   bool cycle_momentum, double base_momentum, double max_momentum,
                                   double div_factor, double final_div_factor, bool three_phase,
                                   schedule_interval interval) {
                     return scheduler<OneCycleLR>(
                         "OneCycleLR", std::move(o), interval,
                         one_cycle_options{.max_lr = max_lr,
                                           .total_steps = total_steps,
                                           .epochs = epochs,
                                           .steps_per_epoch = steps_per_epoch,
                                           .pct_start = pct_start,
                                           .anneal_strategy = std::move(anneal_strategy),
                                           .cycle_momentum = cycle_momentum,
                                           .base_momentum = base_momentum,
                                           .max_momentum = max_momentum,
                                           .div_factor = div_factor,
                                           .final_div_factor = final_div_factor,
                                           .three_phase = three_phase});
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<double>("max_lr"),
                   cfg::arg<std::int64_t>("total_steps", one_cycle_defaults.total_steps),
                   cfg::arg<std::int64_t>("epochs", one_cycle_defaults.epochs),
                   cfg::arg<std::int64_t>("steps_per_epoch", one_cycle_defaults.steps_per_epoch),
                   cfg::arg<double>("pct_start", one_cycle_defaults.pct_start),
                   cfg::arg<std::string>("anneal_strategy", one_cycle_defaults.anneal_strategy),
                   cfg::arg<bool>("cycle_momentum", one_cycle_defaults.cycle_momentum),
                   cfg::arg<double>("base_momentum", one_cycle_defaults.base_momentum),
                   cfg::arg<double>("max_momentum", one_cycle_defaults.max_momentum),
                   cfg::arg<double>("div_factor", one_cycle_defaults.div_factor),
                   cfg::arg<double>("final_div_factor", one_cycle_defaults.final_div_factor),
                   cfg::arg<bool>("three_phase", one_cycle_defaults.three_phase),
                   interval_arg(schedule_interval::step));
HOOKFORGE_REGISTER(scheduler, PolynomialLR,
                   cfg::factory([](optimizer_ptr o, std::int64_t total_iters, double power,
                                   schedule_interval interval) {
                     return scheduler<PolynomialLR>("PolynomialLR", std::move(o), interval,
                                                    total_iters, power);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"),
                   cfg::arg<std::int64_t>("total_iters", PolynomialLR::default_total_iters),
                   cfg::arg<double>("power", PolynomialLR::default_power), interval_arg());
HOOKFORGE_REGISTER(scheduler, StepLR,
                   cfg::factory([](optimizer_ptr o, std::int64_t step_size, double gamma,
                                   schedule_interval interval) {
                     return scheduler<StepLR>("StepLR", std::move(o), interval, step_size, gamma);
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<std::int64_t>("step_size"),
                   cfg::arg<double>("gamma", StepLR::default_gamma), interval_arg());
// The composites hold scheduler entries built on the same optimizer before them.
HOOKFORGE_REGISTER(scheduler, SequentialLR,
                   cfg::factory([](optimizer_ptr o, schedule_list schedulers,
                                   std::vector<std::int64_t> milestones,
                                   schedule_interval interval) {
                     return scheduler<SequentialLR>("SequentialLR", std::move(o), interval,
                                                    schedulers, std::move(milestones));
                   }),
                   cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<schedule_list>("schedulers"),
                   cfg::arg<std::vector<std::int64_t>>("milestones"), interval_arg());
HOOKFORGE_REGISTER(
    scheduler, ChainedScheduler,
    cfg::factory([](optimizer_ptr o, schedule_list schedulers, schedule_interval interval) {
      return scheduler<ChainedScheduler>("ChainedScheduler", std::move(o), interval, schedulers);
    }),
    cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<schedule_list>("schedulers"), interval_arg());
// The optimizer comes first, so ReduceLROnPlateau's options are arguments, with its defaults.
const plateau_options plateau_defaults{};
HOOKFORGE_REGISTER(
    scheduler, ReduceLROnPlateau,
    cfg::factory([](optimizer_ptr o, plateau_mode mode, double factor, std::int64_t patience,
                    double threshold, plateau_threshold_mode threshold_mode, std::int64_t cooldown,
                    double min_lr, std::vector<double> min_lrs, double eps,
                    schedule_interval interval) {
      return scheduler<ReduceLROnPlateau>("ReduceLROnPlateau", std::move(o), interval,
                                          plateau_options{.mode = mode,
                                                          .factor = factor,
                                                          .patience = patience,
                                                          .threshold = threshold,
                                                          .threshold_mode = threshold_mode,
                                                          .cooldown = cooldown,
                                                          .min_lr = min_lr,
                                                          .min_lrs = std::move(min_lrs),
                                                          .eps = eps});
    }),
    cfg::arg<optimizer_ptr>("optimizer"), cfg::arg<plateau_mode>("mode", plateau_defaults.mode),
    cfg::arg<double>("factor", plateau_defaults.factor),
    cfg::arg<std::int64_t>("patience", plateau_defaults.patience),
    cfg::arg<double>("threshold", plateau_defaults.threshold),
    cfg::arg<plateau_threshold_mode>("threshold_mode", plateau_defaults.threshold_mode),
    cfg::arg<std::int64_t>("cooldown", plateau_defaults.cooldown),
    cfg::arg<double>("min_lr", plateau_defaults.min_lr),
    cfg::arg<std::vector<double>>("min_lrs", plateau_defaults.min_lrs),
    cfg::arg<double>("eps", plateau_defaults.eps), interval_arg());

HOOKFORGE_REGISTER(stop_condition, ValidationLossDidNotImprove, cfg::arg<std::int64_t>("patience"),
                   cfg::arg<double>("min_delta", 0.0));
HOOKFORGE_REGISTER(stop_condition, NoCondition);

void hookforge::run::detail::link_schedulers() {}
