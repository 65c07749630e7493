// hookforge_peer_plain --epochs E --work-dir W: the default job (configs/default.yaml) as a
// plain LibTorch loop, no hookforge runner or hook: the C++ baseline of benchmarks/peers.
// The same ESPCN, images (ProceduralImages, cached), batch, Adam, cosine schedule, MSE,
// validation (loss, PSNR, SSIM, and bicubic's), a checkpoint per epoch (last 2 and the
// best, each written to a temporary file and renamed), early stopping (patience 3), a
// CSV line per epoch and a loss read every 16 steps (the progress bar's refresh). Batches
// are gathered with index_select from the stacked images, the cheapest way by hand. Ends
// with the line `RESULT {json}` that benchmarks/peers/compare.py reads.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>

#include <torch/torch.h>

#include "hookforge/torch/data/procedural_images.hpp"
#include "hookforge/torch/metrics/psnr.hpp"
#include "hookforge/torch/metrics/ssim.hpp"
#include "hookforge/torch/models/espcn.hpp"
#include "job_args.hpp"

namespace {

struct images {
  torch::Tensor input, target, bicubic;
};

images stacked(const hookforge::ProceduralImages& data) {
  std::vector<torch::Tensor> in, tg, bc;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto s = data.get(i);
    in.push_back(s.at("input")), tg.push_back(s.at("target")), bc.push_back(s.at("bicubic"));
  }
  return {torch::stack(in), torch::stack(tg), torch::stack(bc)};
}

void save(hookforge::ESPCN& model, torch::optim::Adam& optimizer, const std::filesystem::path& to) {
  torch::serialize::OutputArchive archive;
  model->save(archive);
  optimizer.save(archive);
  auto tmp = to;
  tmp += ".tmp";
  archive.save_to(tmp.string());
  std::filesystem::rename(tmp, to);
}

}  // namespace

int main(int argc, char** argv) {
  const auto [epochs, work_dir] = peers::parse_job_args(argc, argv, "runs/plain");
  torch::set_num_threads(1);
  const auto started = std::chrono::steady_clock::now();

  const auto train = stacked(hookforge::ProceduralImages(
      {.count = 4096, .size = 48, .scale = 2, .seed = 1, .cache = true}));
  const auto val = stacked(hookforge::ProceduralImages(
      {.count = 128, .size = 48, .scale = 2, .seed = 2, .cache = true}));
  torch::manual_seed(0);
  hookforge::ESPCN model(
      hookforge::espcn_options{.scale = 2, .channels = 1, .features = 64, .residual = true});
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  const double base_lr = 1e-3, eta_min = 1e-5, pi = 3.14159265358979323846;
  const hookforge::PSNR psnr;
  const hookforge::SSIM ssim;
  auto generator = at::detail::createCPUGenerator(0);

  std::ofstream csv(work_dir / "metrics.csv");
  csv << "epoch,train_loss,val_loss,val_psnr,val_ssim,val_bicubic_psnr,val_bicubic_ssim,lr\n";
  std::deque<std::filesystem::path> kept;
  double best = -INFINITY, last_psnr = 0, last_bicubic = 0;
  int since_best = 0, done = 0;
  const std::int64_t n = train.input.size(0), batch = 16;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const double lr = eta_min + (base_lr - eta_min) * (1 + std::cos(pi * (epoch - 1) / epochs)) / 2;
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);

    model->train();
    const auto order = torch::randperm(n, generator);
    auto loss_sum = torch::zeros({});
    for (std::int64_t b = 0, step = 0; b < n; b += batch, ++step) {
      const auto index = order.slice(0, b, std::min(b + batch, n));
      const auto input = train.input.index_select(0, index);
      const auto target = train.target.index_select(0, index);
      optimizer.zero_grad();
      const auto loss = torch::mse_loss(model->forward(input), target);
      loss.backward();
      optimizer.step();
      loss_sum += loss.detach() * index.size(0);
      if ((step + 1) % 16 == 0)
        std::printf("\repoch %d step %lld loss %.6f", epoch, static_cast<long long>(step + 1),
                    loss.item<float>());
    }

    torch::NoGradGuard no_grad;
    model->eval();
    double val_loss = 0, val_psnr = 0, val_ssim = 0, bic_psnr = 0, bic_ssim = 0;
    const std::int64_t m = val.input.size(0);
    for (std::int64_t b = 0; b < m; b += 32) {
      const auto e = std::min(b + 32, m);
      const double w = static_cast<double>(e - b) / static_cast<double>(m);
      const auto target = val.target.slice(0, b, e);
      const auto output = model->forward(val.input.slice(0, b, e));
      const hookforge::Entry sr{{"output", output}, {"target", target}};
      const hookforge::Entry bicubic{{"output", val.bicubic.slice(0, b, e)}, {"target", target}};
      val_loss += w * torch::mse_loss(output, target).item<double>();
      val_psnr += w * psnr(sr).item<double>(), val_ssim += w * ssim(sr).item<double>();
      bic_psnr += w * psnr(bicubic).item<double>(), bic_ssim += w * ssim(bicubic).item<double>();
    }
    const double train_loss = loss_sum.item<double>() / static_cast<double>(n);
    std::printf("\repoch %d/%d | train loss %.6f | val psnr %.2f ssim %.4f | lr %g\n", epoch,
                epochs, train_loss, val_psnr, val_ssim, lr);
    csv << epoch << ',' << train_loss << ',' << val_loss << ',' << val_psnr << ',' << val_ssim
        << ',' << bic_psnr << ',' << bic_ssim << ',' << lr << std::endl;

    const auto path = work_dir / ("epoch_" + std::to_string(epoch) + ".pt");
    save(model, optimizer, path);
    kept.push_back(path);
    if (kept.size() > 2) std::filesystem::remove(kept.front()), kept.pop_front();
    last_psnr = val_psnr, last_bicubic = bic_psnr, done = epoch;
    if (val_psnr > best) {
      best = val_psnr, since_best = 0;
      save(model, optimizer, work_dir / "best.pt");
    } else if (++since_best >= 3) {
      break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "RESULT {\"framework\": \"plain C++\", \"epochs\": %d, \"seconds\": %.3f, "
      "\"val_psnr\": %.4f, \"val_bicubic_psnr\": %.4f}\n",
      done, seconds, last_psnr, last_bicubic);
}
