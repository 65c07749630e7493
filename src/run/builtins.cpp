// The built-in classes a run's config can name: every HOOKFORGE_REGISTER of the torch layer's
// objects (models, optimisers, losses, metrics, datasets, loaders). The built-in hooks are
// registered in builtin_hooks.cpp, the components (runners, trainer) in components.cpp, the
// schedulers and stop conditions in schedulers.cpp. link_builtins() is called by
// hookforge::run::main so that this object file, and with it the registrations, is linked from
// the static library.
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
                          cfg::field("real_field", &gan_discriminator_loss_options::real_field)
                              .naming(run::d_loss_field),
                          cfg::field("fake_field", &gan_discriminator_loss_options::fake_field)
                              .naming(run::d_loss_field)));
HOOKFORGE_REGISTER_AS(
    loss, "GANGeneratorLoss", run::criterion_loss<GANGeneratorLoss>,
    cfg::options<gan_generator_loss_options>(
        cfg::field("fake_field", &gan_generator_loss_options::fake_field).naming(run::g_loss_field),
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
                          cfg::field("cache", &procedural_images_options::cache),
                          cfg::field("bicubic", &procedural_images_options::bicubic)));
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
        cfg::field("bicubic", &image_folder_options::bicubic),
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

void hookforge::run::detail::link_builtins() {}
