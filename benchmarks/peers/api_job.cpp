// hookforge_peer_api --epochs E --work-dir W: the default job (configs/default.yaml) written
// against hookforge's C++ API, as a user of the library writes it: no config layer, no type
// erasure, static hooks. The same ESPCN, images (ProceduralImages, cached; the training set
// without the bicubic baseline, as the config), batch, Adam, cosine schedule, MSE and
// validation (loss, PSNR, SSIM, and bicubic's) as benchmarks/peers/plain_loop.cpp, with what
// that loop does by hand done by hooks: a checkpoint per epoch (the last 2 and the best),
// early stopping (patience 3), a CSV line per epoch (LossLogger) and the loss read every 16
// steps (ProgressBar). Ends with the line `RESULT {json}` that benchmarks/peers/compare.py
// reads ("hookforge C++ API" there).
#include <cstdio>
#include <filesystem>

#include <hookforge/hooks/checkpoint_saver.hpp>
#include <hookforge/hooks/early_stopping.hpp>
#include <hookforge/hooks/loss_logger.hpp>
#include <hookforge/hooks/progress_bar.hpp>
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include "job_args.hpp"

int main(int argc, char** argv) {
  const auto [epochs, work_dir] = peers::parse_job_args(argc, argv, "runs/api");
  torch::set_num_threads(1);
  using namespace hookforge;

  DataLoader train_loader(
      ProceduralImages(
          {.count = 4096, .size = 48, .scale = 2, .seed = 1, .cache = true, .bicubic = false}),
      {.batch_size = 16, .shuffle = true, .seed = 0, .pin_memory = true});
  DataLoader val_loader(
      ProceduralImages({.count = 128, .size = 48, .scale = 2, .seed = 2, .cache = true}),
      {.batch_size = 32});
  torch::manual_seed(0);
  ESPCN model(espcn_options{.scale = 2, .channels = 1, .features = 64, .residual = true});
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  CosineAnnealingLR schedule(adam, /*T_max=*/epochs, /*eta_min=*/1e-5);

  ProgressBar progress({.refresh = 16});
  TrainingEpochRunner train(adam, {}, hookforge::ref(progress));
  const PSNR bicubic_psnr{.output_field = "bicubic", .name = "bicubic_psnr"};
  const SSIM bicubic_ssim{.output_field = "bicubic", .name = "bicubic_ssim"};
  ValidationEpochRunner validate(
      inference_options{.metrics = {PSNR{}, SSIM{}, bicubic_psnr, bicubic_ssim}},
      hookforge::ref(progress));
  Trainer trainer(
      model, train, validate,
      {.epochs = epochs, .scheduler = &schedule, .monitor = "psnr", .work_dir = work_dir},
      LossLogger({.stream = nullptr}), CheckpointSaver({.max_keep_ckpts = 2, .save_best = "psnr"}),
      EarlyStopping({.patience = 3}));
  const auto result = trainer.fit(train_loader, val_loader, MSELoss{});
  std::printf(
      "RESULT {\"framework\": \"hookforge C++ API\", \"epochs\": %lld, "
      "\"val_psnr\": %.4f, \"val_bicubic_psnr\": %.4f}\n",
      static_cast<long long>(result.completed_epochs), result.val_scores.at("psnr"),
      result.val_scores.at("bicubic_psnr"));
}
