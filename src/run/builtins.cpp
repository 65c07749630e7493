// The built-in classes a run's config can name: every HOOKFORGE_REGISTER of the torch layer's
// objects (models, optimisers, losses, metrics, datasets, loaders) and of the built-in hooks,
// with the contexts each hook serves. The components (runners, trainer) are registered in
// components.cpp, the schedulers and stop conditions in schedulers.cpp. link_builtins() is
// called by hookforge::run::main so that this object file, and with it the registrations, is
// linked from the static library.
#include <map>

#include "hookforge/hooks.hpp"
#include "hookforge/images/image_folder.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/run/field_flow.hpp"
#include "hookforge/run/hooks.hpp"
#include "hookforge/run/loader.hpp"
#include "hookforge/run/loss.hpp"
#include "hookforge/run/machine.hpp"
#include "hookforge/run/metric.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/run/optimizer.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/trainer.hpp"
#include "hookforge/run/values.hpp"
#include "hookforge/torch/data/procedural_images.hpp"
#include "hookforge/torch/data/sine.hpp"
#include "hookforge/torch/losses/adversarial.hpp"
#include "hookforge/torch/losses/charbonnier.hpp"
#include "hookforge/torch/losses/l1.hpp"
#include "hookforge/torch/losses/mse.hpp"
#include "hookforge/torch/metrics/accuracy.hpp"
#include "hookforge/torch/metrics/mae.hpp"
#include "hookforge/torch/metrics/mse.hpp"
#include "hookforge/torch/metrics/psnr.hpp"
#include "hookforge/torch/metrics/ssim.hpp"
#include "hookforge/torch/models/espcn.hpp"
#include "hookforge/torch/models/mlp.hpp"
#include "hookforge/torch/models/patch_discriminator.hpp"

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

/// Adam's and AdamW's parameters (their configs differ in weight_decay's default).
template <class C>
auto adam_options() {
  return cfg::options<C>(cfg::field("model", &C::model, cfg::required), cfg::field("lr", &C::lr),
                         cfg::field("betas", &C::betas), cfg::field("eps", &C::eps),
                         cfg::field("weight_decay", &C::weight_decay),
                         cfg::field("amsgrad", &C::amsgrad), cfg::field("fused", &C::fused));
}

/// A loss comparing two fields of the batch.
template <class L>
auto field_pair_options() {
  return cfg::options<L>(cfg::field("output_field", &L::output_field).naming(run::batch_field),
                         cfg::field("target_field", &L::target_field).naming(run::batch_field));
}

/// PSNR's and SSIM's parameters.
template <class M>
auto image_metric_options() {
  return cfg::options<M>(cfg::field("data_range", &M::data_range),
                         cfg::field("crop_border", &M::crop_border),
                         cfg::field("y_channel", &M::y_channel),
                         cfg::field("output_field", &M::output_field).naming(run::batch_field),
                         cfg::field("target_field", &M::target_field).naming(run::batch_field),
                         cfg::field("name", &M::name));
}
}  // namespace

// --- models ----------------------------------------------------------------------------------

HOOKFORGE_REGISTER_AS(model, "ESPCN", run::module_model<ESPCN>,
                      cfg::options<espcn_options>(cfg::field("scale", &espcn_options::scale),
                                                  cfg::field("channels", &espcn_options::channels),
                                                  cfg::field("features", &espcn_options::features),
                                                  cfg::field("residual", &espcn_options::residual),
                                                  cfg::field("input_field",
                                                             &espcn_options::input_field)
                                                      .naming(run::loaded_field)));
HOOKFORGE_REGISTER_AS(
    model, "MLP", run::module_model<MLP>,
    cfg::options<mlp_options>(
        cfg::field("in_features", &mlp_options::in_features),
        cfg::field("hidden", &mlp_options::hidden),
        cfg::field("out_features", &mlp_options::out_features),
        cfg::field("activation", &mlp_options::activation),
        cfg::field("input_field", &mlp_options::input_field).naming(run::loaded_field)));
HOOKFORGE_REGISTER_AS(model, "PatchDiscriminator", run::module_model<PatchDiscriminator>,
                      cfg::options<patch_discriminator_options>(
                          cfg::field("channels", &patch_discriminator_options::channels),
                          cfg::field("features", &patch_discriminator_options::features),
                          cfg::field("layers", &patch_discriminator_options::layers),
                          cfg::field("input_field", &patch_discriminator_options::input_field)));

// `file` is an input: taken as written (relative to the working directory).
HOOKFORGE_REGISTER_AS(model, "Pretrained", run::pretrained_model,
                      cfg::options<run::pretrained_config>(
                          cfg::field("model", &run::pretrained_config::model, cfg::required),
                          cfg::field("file", &run::pretrained_config::file),
                          cfg::field("prefix", &run::pretrained_config::prefix),
                          cfg::field("strict", &run::pretrained_config::strict),
                          cfg::field("section", &run::pretrained_config::section),
                          cfg::field("key", &run::pretrained_config::key),
                          cfg::field("strip_prefix", &run::pretrained_config::strip_prefix),
                          cfg::field("rename", &run::pretrained_config::rename),
                          cfg::field("opaque_globals", &run::pretrained_config::opaque_globals),
                          cfg::field("freeze", &run::pretrained_config::freeze)));

// --- optimisers ------------------------------------------------------------------------------

HOOKFORGE_REGISTER_AS(
    optimizer, "SGD", torch::optim::SGD, cfg::factory(&run::make_sgd),
    cfg::options<run::sgd_config>(cfg::field("model", &run::sgd_config::model, cfg::required),
                                  cfg::field("lr", &run::sgd_config::lr, cfg::required),
                                  cfg::field("momentum", &run::sgd_config::momentum),
                                  cfg::field("dampening", &run::sgd_config::dampening),
                                  cfg::field("weight_decay", &run::sgd_config::weight_decay),
                                  cfg::field("nesterov", &run::sgd_config::nesterov)));
// Adam and AdamW build FusedAdam / FusedAdamW with `fused: true`, hence the base type.
HOOKFORGE_REGISTER_AS(optimizer, "Adam", torch::optim::Optimizer, cfg::factory(&run::make_adam),
                      adam_options<run::adam_config>());
HOOKFORGE_REGISTER_AS(optimizer, "AdamW", torch::optim::Optimizer, cfg::factory(&run::make_adamw),
                      adam_options<run::adamw_config>());
HOOKFORGE_REGISTER_AS(optimizer, "RMSprop", torch::optim::RMSprop, cfg::factory(&run::make_rmsprop),
                      cfg::options<run::rmsprop_config>(
                          cfg::field("model", &run::rmsprop_config::model, cfg::required),
                          cfg::field("lr", &run::rmsprop_config::lr),
                          cfg::field("alpha", &run::rmsprop_config::alpha),
                          cfg::field("eps", &run::rmsprop_config::eps),
                          cfg::field("weight_decay", &run::rmsprop_config::weight_decay),
                          cfg::field("momentum", &run::rmsprop_config::momentum),
                          cfg::field("centered", &run::rmsprop_config::centered)));

// --- losses ----------------------------------------------------------------------------------

HOOKFORGE_REGISTER_AS(loss, "L1", run::criterion_loss<L1Loss>, field_pair_options<L1Loss>());
HOOKFORGE_REGISTER_AS(loss, "MSE", run::criterion_loss<MSELoss>, field_pair_options<MSELoss>());
HOOKFORGE_REGISTER_AS(
    loss, "Charbonnier", run::criterion_loss<CharbonnierLoss>,
    cfg::options<CharbonnierLoss>(
        cfg::field("eps", &CharbonnierLoss::eps),
        cfg::field("output_field", &CharbonnierLoss::output_field).naming(run::batch_field),
        cfg::field("target_field", &CharbonnierLoss::target_field).naming(run::batch_field)));
HOOKFORGE_REGISTER_AS(loss, "WeightedSum", run::weighted_sum_loss,
                      cfg::arg<std::vector<run::weighted_term_config>>("terms"));
HOOKFORGE_REGISTER_AS(loss, "GANDiscriminatorLoss", run::criterion_loss<GANDiscriminatorLoss>,
                      cfg::options<gan_discriminator_loss_options>(
                          cfg::field("real_field", &gan_discriminator_loss_options::real_field),
                          cfg::field("fake_field", &gan_discriminator_loss_options::fake_field)));
HOOKFORGE_REGISTER_AS(loss, "GANGeneratorLoss", run::criterion_loss<GANGeneratorLoss>,
                      cfg::options<gan_generator_loss_options>(
                          cfg::field("fake_field", &gan_generator_loss_options::fake_field),
                          cfg::field("weight", &gan_generator_loss_options::weight)));

// --- metrics ---------------------------------------------------------------------------------

HOOKFORGE_REGISTER_AS(metric, "PSNR", run::metric_of<PSNR>, image_metric_options<PSNR>());
HOOKFORGE_REGISTER_AS(metric, "SSIM", run::metric_of<SSIM>, image_metric_options<SSIM>());
HOOKFORGE_REGISTER_AS(
    metric, "MAE", run::metric_of<MAE>,
    cfg::options<MAE>(cfg::field("output_field", &MAE::output_field).naming(run::batch_field),
                      cfg::field("target_field", &MAE::target_field).naming(run::batch_field),
                      cfg::field("name", &MAE::name)));
HOOKFORGE_REGISTER_AS(
    metric, "MSE", run::metric_of<MSE>,
    cfg::options<MSE>(cfg::field("output_field", &MSE::output_field).naming(run::batch_field),
                      cfg::field("target_field", &MSE::target_field).naming(run::batch_field),
                      cfg::field("name", &MSE::name)));
HOOKFORGE_REGISTER_AS(
    metric, "Accuracy", run::metric_of<Accuracy>,
    cfg::options<Accuracy>(
        cfg::field("top_k", &Accuracy::top_k),
        cfg::field("output_field", &Accuracy::output_field).naming(run::batch_field),
        cfg::field("target_field", &Accuracy::target_field).naming(run::batch_field),
        cfg::field("name", &Accuracy::name)));

// --- datasets and loaders --------------------------------------------------------------------

namespace {
/// A ProceduralImages sample of side `size`: its HR image and (at scale 2 or more) at most a
/// quarter of it for the input, float RGB.
bool image_fits(const std::int64_t& size) {
  const double side = static_cast<double>(size);
  return run::affordable(side * side * 3 * sizeof(float) * 1.25);
}
}  // namespace

HOOKFORGE_REGISTER_AS(dataset, "ProceduralImages", run::dataset_of<ProceduralImages>,
                      cfg::options<procedural_images_options>(
                          cfg::field("count", &procedural_images_options::count),
                          cfg::field("size", &procedural_images_options::size)
                              .check(image_fits,
                                     fmt::format("an image size that fits in "
                                                 "half this machine's memory ({})",
                                                 run::gibibytes(run::allocation_budget()))),
                          cfg::field("scale", &procedural_images_options::scale),
                          cfg::field("seed", &procedural_images_options::seed),
                          cfg::field("cache", &procedural_images_options::cache)));
template <>
struct hookforge::run::enum_names<hookforge::image_color> {
  static constexpr std::pair<std::string_view, image_color> values[] = {
      {"rgb", image_color::rgb}, {"gray", image_color::gray}, {"y", image_color::y}};
};

namespace {
/// A count a config multiplies by another (repeat x files, batch_size x the batches workers
/// load ahead): at most 2^31, far from where the product overflows an int64. Values below 1
/// are left to the class, which says what it takes.
bool multiplier(const std::int64_t& n) { return n <= (std::int64_t{1} << 31); }
}  // namespace

namespace hookforge::run {
/// ImageFolder as hookforge-run builds it: an image's decoded and prepared forms, and the
/// cache, may take at most half this machine's memory, as any allocation a config asks for.
struct machine_image_folder : ImageFolder {
  explicit machine_image_folder(image_folder_options o)
      : ImageFolder(within_memory(std::move(o))) {}
  static image_folder_options within_memory(image_folder_options o) {
    if (o.memory_limit == 0) o.memory_limit = run::allocation_budget();
    return o;
  }
};
}  // namespace hookforge::run

// `root` and `lr_root` are inputs: taken as written (relative to the working directory),
// never placed under the run's output directory.
HOOKFORGE_REGISTER_AS(
    dataset, "ImageFolder", run::dataset_of<run::machine_image_folder>,
    cfg::options<image_folder_options>(
        cfg::field("root", &image_folder_options::root, cfg::required),
        cfg::field("files", &image_folder_options::files),
        cfg::field("files_outside_root", &image_folder_options::files_outside_root),
        cfg::field("color", &image_folder_options::color),
        cfg::field("repeat", &image_folder_options::repeat)
            .check(multiplier, "a number of samples per file of at most 2147483648"),
        cfg::field("scale", &image_folder_options::scale),
        cfg::field("patch", &image_folder_options::patch),
        cfg::field("flip", &image_folder_options::flip),
        cfg::field("rotate", &image_folder_options::rotate),
        cfg::field("cache", &image_folder_options::cache),
        cfg::field("bit_depth", &image_folder_options::bit_depth),
        cfg::field("max_pixels", &image_folder_options::max_pixels),
        cfg::field("seed", &image_folder_options::seed),
        cfg::field("missing_hint", &image_folder_options::missing_hint),
        cfg::field("lr_root", &image_folder_options::lr_root),
        cfg::field("lr_suffix", &image_folder_options::lr_suffix)));
HOOKFORGE_REGISTER_AS(
    dataset, "Sine", run::dataset_of<SineRegression>,
    cfg::options<sine_regression_options>(cfg::field("count", &sine_regression_options::count),
                                          cfg::field("low", &sine_regression_options::low),
                                          cfg::field("high", &sine_regression_options::high),
                                          cfg::field("noise", &sine_regression_options::noise),
                                          cfg::field("seed", &sine_regression_options::seed)));

HOOKFORGE_REGISTER_AS(loader, "DataLoader", run::Loader,
                      cfg::options<run::loader_config>(
                          cfg::field("dataset", &run::loader_config::dataset, cfg::required),
                          cfg::field("batch_size", &run::loader_config::batch_size)
                              .check(multiplier, "a batch size of at most 2147483648"),
                          cfg::field("shuffle", &run::loader_config::shuffle),
                          cfg::field("seed", &run::loader_config::seed),
                          cfg::field("drop_last", &run::loader_config::drop_last),
                          cfg::field("workers", &run::loader_config::workers)
                              .check(run::within_cores,
                                     fmt::format("a number of worker threads from 0 to {} (this "
                                                 "machine's cores)",
                                                 run::machine_cores())),
                          cfg::field("pin_memory", &run::loader_config::pin_memory),
                          cfg::field("shard", &run::loader_config::shard)));

// --- hooks -----------------------------------------------------------------------------------

namespace {
/// A program a config may name: a bare name, found through PATH as a shell would.
bool program_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos;
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
HOOKFORGE_REGISTER(
    trainer_hook, HookProfiler,
    cfg::factory([](bool print_at_end, std::vector<std::string> components, bool per_epoch) {
      const std::vector<std::string> known{"trainer", "training_runner", "validation_runner"};
      for (const auto& c : components)
        if (std::find(known.begin(), known.end(), c) == known.end())
          throw std::invalid_argument(fmt::format("HookProfiler: components must name {}, got '{}'",
                                                  hookforge::join_names(known, ", "), c));
      return std::make_shared<HookProfiler>(hook_profiler_options{
          .print_at_end = print_at_end, .components = components, .per_epoch = per_epoch});
    }),
    cfg::arg<bool>("print_at_end", true),
    cfg::arg<std::vector<std::string>>("components",
                                       std::vector<std::string>{"trainer", "training_runner",
                                                                "validation_runner"}),
    cfg::arg<bool>("per_epoch", true));
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
HOOKFORGE_RANK_ZERO_ONLY(LossLogger);
HOOKFORGE_RANK_ZERO_ONLY(MetricsPlot);
HOOKFORGE_RANK_ZERO_ONLY(MLflowLogger);
HOOKFORGE_RANK_ZERO_ONLY(ModelSummary);
HOOKFORGE_RANK_ZERO_ONLY(ProgressBar);
HOOKFORGE_RANK_ZERO_ONLY(TensorBoardLogger);

void hookforge::run::detail::link_builtins() {}
