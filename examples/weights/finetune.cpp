// Fine-tuning a model trained in PyTorch, then handing it back to Python: hookforge's ESPCN
// (x2, residual) takes the weights of a plain PyTorch ESPCN (train_espcn.py's
// torch.save(model.state_dict())), trains 300 Adam steps on hookforge's procedural images,
// and writes its weights as safetensors and .pth for evaluate.py. Its PSNR against bicubic
// upscaling is measured before and after, on 256 procedural images it never trains on.
//
//   hookforge_example_weights espcn_python.pth [OUT_DIR]     (OUT_DIR: runs/weights_example)
//   ./scripts/run.sh example weights espcn_python.pth
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>

#include <fmt/core.h>

using hookforge::Entry;

namespace {

constexpr std::int64_t steps = 300, batch_size = 16, scale = 2;

/// Prints the mean PSNR of `model` and of bicubic upscaling on `images` (one batch).
void measure(const char* when, hookforge::ESPCN& model, const Entry& images) {
  torch::NoGradGuard no_grad;
  model->eval();
  const hookforge::PSNR psnr{.crop_border = scale};  // the usual border crop of SR benchmarks
  auto db = [&](const torch::Tensor& output) {
    return psnr(Entry{{"output", output}, {"target", images.at("target")}}).item<double>();
  };
  const double espcn_db = db(model->forward(images).clamp(0, 1));
  const double bicubic_db = db(images.at("bicubic"));
  fmt::print("{}: ESPCN {:.2f} dB, bicubic {:.2f} dB ({:+.2f} dB)\n", when, espcn_db, bicubic_db,
             espcn_db - bicubic_db);
  model->train();
}

int run(const std::filesystem::path& pth, const std::filesystem::path& out_dir) {
  torch::manual_seed(0);
  hookforge::ESPCN model(hookforge::espcn_options{.scale = scale, .residual = true});
  auto report = hookforge::load_pretrained(*model, {.file = pth});
  fmt::print("{}\n", report.summary());

  // Validation: 256 images (seed 2) as one batch; training: steps * batch_size others (seed 1).
  hookforge::DataLoader validation_loader(
      hookforge::ProceduralImages({.count = 256, .scale = scale, .seed = 2}), {.batch_size = 256});
  const Entry validation = *validation_loader.begin();
  hookforge::DataLoader loader(
      hookforge::ProceduralImages({.count = steps * batch_size, .scale = scale, .seed = 1}),
      {.batch_size = batch_size, .shuffle = true, .seed = 3});
  measure("before fine-tuning", model, validation);

  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(2e-4));
  std::int64_t step = 0;
  double mse = 0, bicubic_mse = 0;
  for (const Entry& batch : loader) {
    auto loss = torch::mse_loss(model->forward(batch), batch.at("target"));
    adam.zero_grad();
    loss.backward();
    adam.step();
    mse += loss.item<double>();
    bicubic_mse += torch::mse_loss(batch.at("bicubic"), batch.at("target")).item<double>();
    if (++step % 100 == 0) {
      fmt::print("step {}: MSE {:.6f} (bicubic {:.6f})\n", step, mse / 100, bicubic_mse / 100);
      mse = bicubic_mse = 0;
    }
  }
  measure("after fine-tuning", model, validation);

  std::filesystem::create_directories(out_dir);
  for (auto format : {hookforge::weights_format::safetensors, hookforge::weights_format::pth}) {
    auto file = out_dir / "espcn_finetuned";
    file += hookforge::weights_suffix(format);
    hookforge::save_weights(*model, file, format);
    fmt::print("wrote {} ({} bytes)\n", file.string(), std::filesystem::file_size(file));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fmt::print(stderr, "usage: {} PTH [OUT_DIR]\n", argv[0]);
    return 2;
  }
  try {
    return run(argv[1], argc > 2 ? argv[2] : "runs/weights_example");
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", argv[0], e.what());
    return 1;
  }
}
