// The built-in hooks a run's config can name: their HOOKFORGE_REGISTERs, with the contexts each
// serves, and which of them act on rank 0 only. link_builtin_hooks() is called by
// hookforge::run::main (through link_registrations) so that this object file, and with it the
// registrations, is linked from the static library.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/hooks.hpp"
#include "hookforge/run/field_flow.hpp"
#include "hookforge/run/hooks.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/run/trainer.hpp"
#include "hookforge/run/values.hpp"

namespace cfg = hookforge::config;
namespace run = hookforge::run;
using namespace hookforge;

namespace hookforge::config::kinds {
/// LossLogger writes the trainer's epoch rows and a training runner's step rows.
using logger_hook = hook_kind<TrainerContext, TrainingContext>;
/// TensorBoardLogger also shows a validation runner's images.
using board_hook = hook_kind<TrainerContext, TrainingContext, InferenceContext>;
}  // namespace hookforge::config::kinds

namespace {
using model_ptr = std::shared_ptr<run::Model>;
}  // namespace

// --- hooks -----------------------------------------------------------------------------------

namespace {
/// A program a config may name: a bare name, found through PATH as a shell would.
bool program_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos;
}

/// The components whose config-loaded hooks a HookProfiler or SyncAudit may time.
std::vector<std::string> all_components() {
  return {"trainer", "training_runner", "validation_runner"};
}
const std::vector<std::string>& known_components(std::string_view hook,
                                                 const std::vector<std::string>& components) {
  const auto known = all_components();
  for (const auto& c : components)
    if (std::find(known.begin(), known.end(), c) == known.end())
      throw std::invalid_argument(fmt::format("{}: components must name {}, got '{}'", hook,
                                              hookforge::join_names(known, ", "), c));
  return components;
}
}  // namespace

HOOKFORGE_REGISTER(
    runner_hook, BatchImageSaver,
    cfg::options<batch_image_saver_options>(
        cfg::field("out_dir", &batch_image_saver_options::out_dir, cfg::required).output_path(),
        cfg::field("fields", &batch_image_saver_options::fields).naming(run::batch_field),
        cfg::field("batches", &batch_image_saver_options::batches),
        cfg::field("every", &batch_image_saver_options::every),
        cfg::field("max_images", &batch_image_saver_options::max_images),
        cfg::field("value_range", &batch_image_saver_options::value_range)));
HOOKFORGE_REGISTER(training_hook, CheckInvalidLoss,
                   cfg::options<check_invalid_loss_options>(
                       cfg::field("interval", &check_invalid_loss_options::interval),
                       cfg::field("action", &check_invalid_loss_options::action)));
HOOKFORGE_REGISTER(
    trainer_hook, CheckpointSaver,
    cfg::options<checkpoint_saver_options>(
        cfg::field("interval", &checkpoint_saver_options::interval),
        cfg::field("by_epoch", &checkpoint_saver_options::by_epoch),
        cfg::field("max_keep_ckpts", &checkpoint_saver_options::max_keep_ckpts),
        cfg::field("save_last", &checkpoint_saver_options::save_last),
        cfg::field("save_begin", &checkpoint_saver_options::save_begin),
        cfg::field("save_best", &checkpoint_saver_options::save_best).naming(run::validation_score),
        cfg::field("rule", &checkpoint_saver_options::rule),
        cfg::field("save_top_k", &checkpoint_saver_options::save_top_k),
        cfg::field("best_filename_tmpl", &checkpoint_saver_options::best_filename_tmpl),
        cfg::field("out_dir", &checkpoint_saver_options::out_dir).output_path(),
        cfg::field("filename_tmpl", &checkpoint_saver_options::filename_tmpl),
        cfg::field("save_optimizer", &checkpoint_saver_options::save_optimizer),
        cfg::field("published_keys", &checkpoint_saver_options::published_keys),
        cfg::field("weights_format", &checkpoint_saver_options::weights_format),
        cfg::field("weights_section", &checkpoint_saver_options::weights_section)));
HOOKFORGE_REGISTER(gan_hook, DWarmup,
                   cfg::options<d_warmup_options>(cfg::field("batches",
                                                             &d_warmup_options::batches)));
HOOKFORGE_REGISTER(
    trainer_hook, EarlyStopping,
    cfg::options<early_stopping_options>(
        cfg::field("monitor", &early_stopping_options::monitor).naming(run::validation_score),
        cfg::field("rule", &early_stopping_options::rule),
        cfg::field("min_delta", &early_stopping_options::min_delta),
        cfg::field("patience", &early_stopping_options::patience),
        cfg::field("strict", &early_stopping_options::strict),
        cfg::field("check_finite", &early_stopping_options::check_finite),
        cfg::field("stopping_threshold", &early_stopping_options::stopping_threshold)));
HOOKFORGE_REGISTER(
    training_hook, EdgeEnhancedInput,
    cfg::options<edge_enhanced_input_options>(
        cfg::field("field", &edge_enhanced_input_options::field).naming(run::loaded_field),
        cfg::field("eps", &edge_enhanced_input_options::eps)));
HOOKFORGE_REGISTER(hook, EMA,
                   cfg::factory([](model_ptr model, double momentum, std::int64_t begin_iter,
                                   bool update_buffers) {
                     if (!model) throw std::invalid_argument("EMA: model must be given");
                     auto ema = std::make_shared<EMA>(
                         model->module(), ema_options{.momentum = momentum,
                                                      .begin_iter = begin_iter,
                                                      .update_buffers = update_buffers});
                     return run::keep_alive(std::move(ema), model);
                   }),
                   cfg::arg<model_ptr>("model"), cfg::arg<double>("momentum", 0.0002),
                   cfg::arg<std::int64_t>("begin_iter", 0),
                   cfg::arg<bool>("update_buffers", false));
HOOKFORGE_REGISTER(runner_hook, EmptyCache,
                   cfg::options<empty_cache_options>(
                       cfg::field("before_epoch", &empty_cache_options::before_epoch),
                       cfg::field("after_epoch", &empty_cache_options::after_epoch),
                       cfg::field("after_step", &empty_cache_options::after_step)));
HOOKFORGE_REGISTER(
    training_hook, GradientClip,
    cfg::options<gradient_clip_options>(
        cfg::field("max_norm", &gradient_clip_options::max_norm),
        cfg::field("norm_type", &gradient_clip_options::norm_type).allowing_infinity(),
        cfg::field("clip_value", &gradient_clip_options::clip_value),
        cfg::field("nonfinite", &gradient_clip_options::nonfinite)));
HOOKFORGE_REGISTER(trainer_hook, HookProfiler,
                   cfg::factory([](bool print_at_end, std::vector<std::string> components,
                                   bool per_epoch) {
                     return std::make_shared<HookProfiler>(hook_profiler_options{
                         .print_at_end = print_at_end,
                         .components = known_components("HookProfiler", components),
                         .per_epoch = per_epoch});
                   }),
                   cfg::arg<bool>("print_at_end", true),
                   cfg::arg<std::vector<std::string>>("components", all_components()),
                   cfg::arg<bool>("per_epoch", true));
HOOKFORGE_REGISTER(trainer_hook, SyncAudit,
                   cfg::factory([](bool print_at_end, std::vector<std::string> components) {
                     return std::make_shared<SyncAudit>(sync_audit_options{
                         .print_at_end = print_at_end,
                         .components = known_components("SyncAudit", components)});
                   }),
                   cfg::arg<bool>("print_at_end", true),
                   cfg::arg<std::vector<std::string>>("components", all_components()));
HOOKFORGE_REGISTER(runner_hook, IterTimer);
HOOKFORGE_REGISTER(
    logger_hook, LossLogger,
    cfg::factory([](std::int64_t interval, std::filesystem::path out_dir, bool console) {
      return LossLogger(loss_logger_options{.interval = interval,
                                            .out_dir = std::move(out_dir),
                                            .stream = console ? &std::cout : nullptr});
    }),
    cfg::arg<std::int64_t>("interval", 0),
    cfg::arg<std::filesystem::path>("out_dir", {}).output_path(), cfg::arg<bool>("console", true));
HOOKFORGE_REGISTER(
    board_hook, TensorBoardLogger,
    cfg::factory([](std::int64_t interval, std::filesystem::path out_dir, std::int64_t images,
                    std::vector<std::string> image_fields, std::pair<double, double> value_range,
                    bool config) {
      return TensorBoardLogger(tensorboard_logger_options{
          .interval = interval,
          .out_dir = std::move(out_dir),
          .images = images,
          .image_fields = std::move(image_fields),
          .value_range = value_range,
          .config_text = config ? run::settings().config_text : std::string()});
    }),
    cfg::arg<std::int64_t>("interval", 0),
    cfg::arg<std::filesystem::path>("out_dir", {}).output_path(),
    cfg::arg<std::int64_t>("images", 0),
    cfg::arg<std::vector<std::string>>("image_fields",
                                       std::vector<std::string>{"input", "output", "target"})
        .naming(run::validation_batch_field),
    cfg::arg<std::pair<double, double>>("value_range", std::pair<double, double>{0.0, 1.0}),
    cfg::arg<bool>("config", true));
HOOKFORGE_REGISTER(
    logger_hook, MLflowLogger,
    cfg::factory([](std::string tracking_uri, std::string experiment, std::string run_name,
                    std::int64_t interval, bool params, bool config, bool log_checkpoint,
                    std::map<std::string, std::string> tags, std::int64_t queue_capacity,
                    double finish_timeout_seconds, bool strict) {
      if (queue_capacity <= 0)
        throw std::invalid_argument(
            fmt::format("MLflowLogger: queue_capacity must be > 0, got {}", queue_capacity));
      const auto& s = run::settings();
      return MLflowLogger(
          mlflow_logger_options{.tracking_uri = std::move(tracking_uri),
                                .experiment = std::move(experiment),
                                .run_name = std::move(run_name),
                                .interval = interval,
                                .params = params ? s.config_params : decltype(s.config_params){},
                                .tags = {tags.begin(), tags.end()},
                                .config_text = config ? s.config_text : std::string(),
                                .log_checkpoint = log_checkpoint,
                                .queue_capacity = static_cast<std::size_t>(queue_capacity),
                                .finish_timeout_seconds = finish_timeout_seconds,
                                .strict = strict || s.strict});
    }),
    cfg::arg<std::string>("tracking_uri", ""), cfg::arg<std::string>("experiment", ""),
    cfg::arg<std::string>("run_name", ""), cfg::arg<std::int64_t>("interval", 0),
    cfg::arg<bool>("params", true), cfg::arg<bool>("config", true),
    cfg::arg<bool>("log_checkpoint", false),
    cfg::arg<std::map<std::string, std::string>>("tags", {}),
    cfg::arg<std::int64_t>("queue_capacity", 100000),
    cfg::arg<double>("finish_timeout_seconds", 30.0), cfg::arg<bool>("strict", false));
HOOKFORGE_REGISTER(training_hook, LRWarmup,
                   cfg::options<lr_warmup_options>(
                       cfg::field("warmup_iters", &lr_warmup_options::warmup_iters, cfg::required),
                       cfg::field("mode", &lr_warmup_options::mode),
                       cfg::field("start_factor", &lr_warmup_options::start_factor)));
HOOKFORGE_REGISTER(trainer_hook, MetricsPlot,
                   cfg::options<metrics_plot_options>(
                       cfg::field("interval", &metrics_plot_options::interval),
                       cfg::field("min_seconds", &metrics_plot_options::min_seconds),
                       cfg::field("out_dir", &metrics_plot_options::out_dir).output_path(),
                       cfg::field("csv", &metrics_plot_options::csv),
                       cfg::field("filename", &metrics_plot_options::filename),
                       cfg::field("panels", &metrics_plot_options::panels),
                       cfg::field("width", &metrics_plot_options::width),
                       cfg::field("panel_height", &metrics_plot_options::panel_height),
                       cfg::field("gnuplot", &metrics_plot_options::gnuplot)
                           .check(program_name,
                                  "the name of a program, looked up in PATH (a config names "
                                  "no file to run: put the program in PATH)"),
                       cfg::field("timeout_seconds", &metrics_plot_options::timeout_seconds)));
HOOKFORGE_REGISTER(
    logger_hook, ProfilerHook,
    cfg::factory([](std::int64_t wait, std::int64_t warmup, std::int64_t active,
                    std::int64_t repeat, std::int64_t skip_first, bool record_shapes,
                    bool profile_memory, bool with_stack, std::filesystem::path out_dir,
                    std::string worker_name, std::int64_t row_limit) {
      // The run's directory, also where the hook is attached to the runners alone.
      if (out_dir.empty()) out_dir = run::settings().work_dir / "profiler";
      return ProfilerHook(profiler_hook_options{.wait = wait,
                                                .warmup = warmup,
                                                .active = active,
                                                .repeat = repeat,
                                                .skip_first = skip_first,
                                                .record_shapes = record_shapes,
                                                .profile_memory = profile_memory,
                                                .with_stack = with_stack,
                                                .out_dir = std::move(out_dir),
                                                .worker_name = std::move(worker_name),
                                                .row_limit = row_limit});
    }),
    cfg::arg<std::int64_t>("wait", 1), cfg::arg<std::int64_t>("warmup", 1),
    cfg::arg<std::int64_t>("active", 3), cfg::arg<std::int64_t>("repeat", 1),
    cfg::arg<std::int64_t>("skip_first", 0), cfg::arg<bool>("record_shapes", false),
    cfg::arg<bool>("profile_memory", false), cfg::arg<bool>("with_stack", false),
    cfg::arg<std::filesystem::path>("out_dir", {}).output_path(),
    cfg::arg<std::string>("worker_name", ""), cfg::arg<std::int64_t>("row_limit", 10));
HOOKFORGE_REGISTER(runner_hook, ProgressBar,
                   cfg::factory([](std::int64_t refresh, bool force_terminal, int width,
                                   std::string train_label, std::string eval_label) {
                     return ProgressBar(progress_bar_options{.refresh = refresh,
                                                             .force_terminal = force_terminal,
                                                             .width = width,
                                                             .train_label = std::move(train_label),
                                                             .eval_label = std::move(eval_label)});
                   }),
                   cfg::arg<std::int64_t>("refresh", 10), cfg::arg<bool>("force_terminal", false),
                   cfg::arg<int>("width", 24), cfg::arg<std::string>("train_label", "train"),
                   cfg::arg<std::string>("eval_label", "val"));
HOOKFORGE_REGISTER(gan_hook, R1GradientPenalty,
                   cfg::options<r1_options>(cfg::field("weight", &r1_options::weight),
                                            cfg::field("interval", &r1_options::interval),
                                            cfg::field("reduction", &r1_options::reduction),
                                            cfg::field("name", &r1_options::name)));
HOOKFORGE_REGISTER(
    trainer_hook, ModelSummary,
    cfg::options<model_summary_options>(cfg::field("max_depth", &model_summary_options::max_depth)
                                            .check([](const std::int64_t& d) { return d >= -1; },
                                                   "an integer >= -1")));
HOOKFORGE_REGISTER(gan_hook, StepRatio,
                   cfg::options<step_ratio_options>(cfg::field("ratio",
                                                               &step_ratio_options::ratio)));

// Hooks that write files or print: in a data-parallel run, on rank 0 only unless an entry
// says `rank_zero_only: false` (config/hooks.hpp).
HOOKFORGE_RANK_ZERO_ONLY(BatchImageSaver);
HOOKFORGE_RANK_ZERO_ONLY(CheckpointSaver);
HOOKFORGE_RANK_ZERO_ONLY(HookProfiler);
HOOKFORGE_RANK_ZERO_ONLY(SyncAudit);
HOOKFORGE_RANK_ZERO_ONLY(LossLogger);
HOOKFORGE_RANK_ZERO_ONLY(MetricsPlot);
HOOKFORGE_RANK_ZERO_ONLY(MLflowLogger);
HOOKFORGE_RANK_ZERO_ONLY(ModelSummary);
HOOKFORGE_RANK_ZERO_ONLY(ProgressBar);
HOOKFORGE_RANK_ZERO_ONLY(TensorBoardLogger);

void hookforge::run::detail::link_builtin_hooks() {}
