// src/run/report.hpp — what hookforge-run prints as a run ends: the closing line (each score,
// beside its baseline), and where a signal stopped it. Private to hookforge::run.
#pragma once

#include <filesystem>
#include <string>

#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge::run::detail {

/// "final: val PSNR 28.49 dB (bicubic 28.27 dB, +0.23 dB), … | 3 epochs (all planned), 1.2 s":
/// each score, and beside a score `s` its baseline `<b>_s` when there is one (bicubic_psnr for
/// psnr), with the difference.
std::string closing_line(const fit_result& result, double seconds);

/// "test: PSNR 33.05 dB (bicubic 32.17 dB, +0.88 dB), SSIM 0.9281 … | best_psnr_epoch_17.pt":
/// the test stage's scores, as the closing line shows them, and the checkpoint they are of.
std::string test_line(const epoch_scores& scores, const std::string& checkpoint);

/// "hookforge-run: stopped by SIGTERM in epoch 2 after step 66; --resume continues from …":
/// where (after an epoch, or in the middle of one), and the checkpoint --resume continues from
/// (or that there is none).
std::string stopped_line(int signal, const fit_result& result,
                         const std::filesystem::path& checkpoint_dir);

}  // namespace hookforge::run::detail
