// hookforge's side of the parity tests (tests/peers/parity.py runs the peers' side and
// compares): each command runs one built-in on inputs given on the command line or in raw
// float32 files, and prints what it decided or computed, one value per line.
//
//   parity early_stopping -     for each line on stdin,
//         RULE MIN_DELTA PATIENCE THRESHOLD|none CHECK_FINITE RESUME_AT SCORE...
//       the 1-based epoch EarlyStopping stops at (0: never); with RESUME_AT > 0, its state is
//       saved after that epoch and loaded into a new hook, which goes on
//   parity scheduler NAME EPOCHS ARG...     the lr and momentum of each of EPOCHS steps (SGD,
//       base lr 0.1, momentum 0.9); SequentialLR and ChainedScheduler are fixed pairs
//       (see scheduler() below), as parity.py builds them
//   parity clip norm|value LIMIT NORM_TYPE IN OUT SIZE...  GradientClip on gradients of those
//       sizes read from IN (raw float32), written to OUT; prints the total norm when by norm
//   parity metrics IN_X IN_Y N C H W         PSNR and SSIM (data_range 1) of two image batches
//   parity ema MOMENTUM BEGIN_ITER STEPS IN OUT SIZE...  a model of parameters of those sizes,
//       moved by STEPS updates read from IN (raw float32, each update the parameters'
//       length), EMA updated after each; OUT: the weights validation then uses
//   parity checkpoint -         for each line on stdin,
//         INTERVAL MAX_KEEP SAVE_LAST SAVE_BEGIN RULE|none RESUME_AT EPOCHS SCORE...
//       CheckpointSaver (save_best "score" by RULE; none: no save_best) over EPOCHS epochs,
//       one SCORE each, in a fresh folder: the files there after each epoch (last_checkpoint
//       aside), epoch files first, comma-separated, epochs separated by '|'; with
//       RESUME_AT > 0, a new hook goes on from the state in that epoch's checkpoint
//   parity top_k -              for each line on stdin, K RULE RESUME_AT EPOCHS SCORE...
//       CheckpointSaver with save_top_k K (best files only): after each epoch the files,
//       sorted by name, and the best file ("files;best"), epochs separated by '|'
//   parity warmup linear|constant|exponential START_FACTOR WARMUP_ITERS STEPS EPOCHS
//         STEP_SIZE GAMMA       the lr of each optimiser step (base lr 0.1) of EPOCHS epochs of
//       STEPS steps, LRWarmup over StepLR(STEP_SIZE, GAMMA) stepped after each epoch
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <torch/torch.h>

#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/hooks/early_stopping.hpp"
#include "hookforge/hooks/ema.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "hookforge/hooks/lr_warmup.hpp"
#include "hookforge/torch/metrics/psnr.hpp"
#include "hookforge/torch/metrics/ssim.hpp"
#include "hookforge/torch/optim/schedulers.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"

namespace {

using namespace hookforge;

double number(const std::string& text) {
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  return std::stod(text);
}

torch::Tensor read_floats(const std::string& path, std::vector<std::int64_t> shape) {
  auto t = torch::empty(shape, torch::kFloat);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(t.data_ptr<float>()),
          static_cast<std::streamsize>(t.numel() * sizeof(float)));
  if (!in) throw std::runtime_error("cannot read " + path);
  return t;
}

/// The stopping epoch for one case (the words of a line of `parity early_stopping -`).
std::int64_t stopping_epoch(const std::vector<std::string>& a) {
  early_stopping_options o{.monitor = "score",
                           .rule = a.at(0),
                           .min_delta = number(a.at(1)),
                           .patience = std::stoll(a.at(2)),
                           .check_finite = a.at(4) == "1"};
  if (a.at(3) != "none") o.stopping_threshold = number(a.at(3));
  const auto resume_at = std::stoll(a.at(5));
  auto hook = std::make_unique<EarlyStopping>(o);
  for (std::size_t i = 6; i < a.size(); ++i) {
    const auto epoch = static_cast<std::int64_t>(i - 6);
    TrainerContext ctx;
    ctx.epoch = epoch;
    ctx.validated = true;
    ctx.val_scores = {{"score", number(a[i])}};
    hook->check(ctx);
    if (ctx.stop_training) return epoch + 1;
    if (epoch + 1 == resume_at) {  // a new hook from the saved state
      auto state = hook->state_dict();
      hook = std::make_unique<EarlyStopping>(o);
      hook->load_state_dict(state);
    }
  }
  return 0;
}

int early_stopping() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::vector<std::string> a{std::istream_iterator<std::string>(words), {}};
    if (!a.empty()) std::cout << stopping_epoch(a) << "\n";
  }
  return 0;
}

int scheduler(const std::vector<std::string>& a) {
  auto p = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD sgd({p}, torch::optim::SGDOptions(0.1).momentum(0.9));
  const std::string name = a.at(0);
  const auto epochs = std::stoll(a.at(1));
  auto arg = [&](std::size_t i) { return number(a.at(2 + i)); };
  std::unique_ptr<lr_scheduler> s;
  if (name == "StepLR")
    s = std::make_unique<StepLR>(sgd, static_cast<std::int64_t>(arg(0)), arg(1));
  if (name == "MultiStepLR")
    s = std::make_unique<MultiStepLR>(sgd,
                                      std::vector<std::int64_t>{static_cast<std::int64_t>(arg(0)),
                                                                static_cast<std::int64_t>(arg(1))},
                                      arg(2));
  if (name == "ExponentialLR") s = std::make_unique<ExponentialLR>(sgd, arg(0));
  if (name == "CosineAnnealingLR")
    s = std::make_unique<CosineAnnealingLR>(sgd, static_cast<std::int64_t>(arg(0)), arg(1));
  if (name == "LinearLR")
    s = std::make_unique<LinearLR>(sgd, arg(0), arg(1), static_cast<std::int64_t>(arg(2)));
  if (name == "ConstantLR")
    s = std::make_unique<ConstantLR>(sgd, arg(0), static_cast<std::int64_t>(arg(1)));
  if (name == "PolynomialLR")
    s = std::make_unique<PolynomialLR>(sgd, static_cast<std::int64_t>(arg(0)), arg(1));
  if (name == "CosineAnnealingWarmRestarts")
    s = std::make_unique<CosineAnnealingWarmRestarts>(sgd, static_cast<std::int64_t>(arg(0)),
                                                      static_cast<std::int64_t>(arg(1)), arg(2));
  if (name == "LambdaLR")  // the same function as parity.py's
    s = std::make_unique<LambdaLR>(sgd, [](std::int64_t e) {
      return std::pow(0.5, static_cast<double>(e / 3)) + 0.01 * static_cast<double>(e);
    });
  if (name == "OneCycleLR") {  // max_lr, total_steps, anneal (0 cos, 1 linear), three_phase
    s = std::make_unique<OneCycleLR>(
        sgd, one_cycle_options{.max_lr = arg(0),
                               .total_steps = static_cast<std::int64_t>(arg(1)),
                               .anneal_strategy = arg(2) == 0 ? "cos" : "linear",
                               .three_phase = arg(3) != 0});
  }
  if (name == "SequentialLR") {  // LinearLR(0.1, 1, M) until milestone M, then CosineAnnealingLR(T)
    const auto m = static_cast<std::int64_t>(arg(0));
    auto warmup = std::make_shared<LinearLR>(sgd, 0.1, 1.0, m);
    auto cosine = std::make_shared<CosineAnnealingLR>(sgd, static_cast<std::int64_t>(arg(1)));
    s = std::make_unique<SequentialLR>(sgd, SequentialLR::schedule_list{warmup, cosine},
                                       std::vector<std::int64_t>{m});
  }
  if (name == "ChainedScheduler") {  // ConstantLR(0.1, N) with ExponentialLR(G)
    auto constant = std::make_shared<ConstantLR>(sgd, 0.1, static_cast<std::int64_t>(arg(0)));
    auto decay = std::make_shared<ExponentialLR>(sgd, arg(1));
    s = std::make_unique<ChainedScheduler>(sgd, ChainedScheduler::schedule_list{constant, decay});
  }
  if (!s) throw std::invalid_argument("no scheduler " + name);
  std::cout.precision(17);
  auto& options = static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options());
  for (std::int64_t e = 0; e < epochs; ++e) {
    std::cout << s->last_lr().at(0) << " " << options.momentum() << "\n";
    s->step();
  }
  return 0;
}

int clip(const std::vector<std::string>& a) {
  const bool by_norm = a.at(0) == "norm";
  const double limit = number(a.at(1)), norm_type = number(a.at(2));
  std::vector<std::int64_t> sizes;
  for (std::size_t i = 5; i < a.size(); ++i) sizes.push_back(std::stoll(a[i]));
  std::int64_t total = 0;
  for (auto n : sizes) total += n;
  auto flat = read_floats(a.at(3), {total});
  std::vector<torch::Tensor> params;
  std::int64_t at = 0;
  for (auto n : sizes) {
    auto p = torch::zeros({n}, torch::requires_grad());
    p.mutable_grad() = flat.slice(0, at, at + n).clone();
    params.push_back(p);
    at += n;
  }
  torch::optim::SGD sgd(params, 0.1);
  TrainingContext ctx;
  ctx.optimizer = &sgd;
  ctx.optimizer_step_due = true;
  GradientClip hook(by_norm ? gradient_clip_options{.max_norm = limit, .norm_type = norm_type}
                            : gradient_clip_options{.clip_value = limit});
  hook.clip_all_grads(ctx);
  std::vector<torch::Tensor> grads;
  for (auto& p : params) grads.push_back(p.grad());
  auto out = torch::cat(grads).contiguous();
  std::ofstream file(a.at(4), std::ios::binary);
  file.write(reinterpret_cast<const char*>(out.data_ptr<float>()),
             static_cast<std::streamsize>(out.numel() * sizeof(float)));
  std::cout.precision(9);
  if (by_norm) std::cout << hook.last_norm().item<double>() << "\n";
  return 0;
}

int metrics(const std::vector<std::string>& a) {
  std::vector<std::int64_t> shape{std::stoll(a.at(2)), std::stoll(a.at(3)), std::stoll(a.at(4)),
                                  std::stoll(a.at(5))};
  Entry e{{"output", read_floats(a.at(0), shape)}, {"target", read_floats(a.at(1), shape)}};
  std::cout.precision(9);
  std::cout << PSNR{}(e).item<double>() << "\n" << SSIM{}(e).item<double>() << "\n";
  return 0;
}

/// A module whose parameters have the given sizes, all zero.
struct Flat : torch::nn::Module {
  explicit Flat(const std::vector<std::int64_t>& sizes) {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      register_parameter("p" + std::to_string(i), torch::zeros({sizes[i]}));
  }
};

int ema(const std::vector<std::string>& a) {
  const double momentum = number(a.at(0));
  const auto begin_iter = std::stoll(a.at(1)), steps = std::stoll(a.at(2));
  std::vector<std::int64_t> sizes;
  for (std::size_t i = 5; i < a.size(); ++i) sizes.push_back(std::stoll(a[i]));
  std::int64_t length = 0;
  for (auto n : sizes) length += n;
  Flat model(sizes);
  EMA hook(model, {.momentum = momentum, .begin_iter = begin_iter});
  const auto updates = read_floats(a.at(3), {steps, length});
  auto params = model.parameters();
  torch::optim::SGD sgd(params, 0.1);
  TrainingContext train;
  train.optimizer = &sgd;
  for (std::int64_t step = 0; step < steps; ++step) {
    torch::NoGradGuard no_grad;
    std::int64_t at = 0;
    for (auto& p : params) {
      p.add_(updates[step].slice(0, at, at + p.numel()));
      at += p.numel();
    }
    train.optimizer_stepped = true;
    train.optimizer_steps = step + 1;
    hook.handle(train, points::on_post_step{});
  }
  InferenceContext validation;  // what a validation runner's epoch sees
  hook.handle(validation, points::on_epoch_start{});
  std::vector<torch::Tensor> used;
  for (auto& p : model.parameters()) used.push_back(p.detach().clone());
  hook.handle(validation, points::on_epoch_end{});
  auto out = torch::cat(used).contiguous();
  std::ofstream file(a.at(4), std::ios::binary);
  file.write(reinterpret_cast<const char*>(out.data_ptr<float>()),
             static_cast<std::streamsize>(out.numel() * sizeof(float)));
  return 0;
}

int warmup(const std::vector<std::string>& a) {
  const std::string mode = a.at(0);
  lr_warmup_options o{.warmup_iters = std::stoll(a.at(2)), .start_factor = number(a.at(1))};
  if (mode == "constant") o.mode = warmup_mode::constant;
  if (mode == "exponential") o.mode = warmup_mode::exponential;
  const auto steps = std::stoll(a.at(3)), epochs = std::stoll(a.at(4));
  auto p = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD sgd({p}, 0.1);
  StepLR schedule(sgd, std::stoll(a.at(5)), number(a.at(6)));
  LRWarmup hook(o);
  TrainingContext ctx;  // what a training runner's steps and epoch end show the hook
  ctx.optimizer = &sgd;
  std::cout.precision(17);
  for (std::int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (std::int64_t step = 0; step < steps; ++step) {
      hook.warm(ctx);  // on_pre_step
      std::cout << sgd.param_groups()[0].options().get_lr() << "\n";
      ++ctx.optimizer_steps;
    }
    hook.restore(ctx);  // on_epoch_end
    schedule.step();
  }
  return 0;
}

/// The trainer as CheckpointSaver sees it: a checkpoint is a tiny file, and the saver's
/// state in it (what a resume from that file loads) is kept by file name.
struct StandInTrainer final : hookforge::detail::trainer_actions {
  const CheckpointSaver* saver = nullptr;
  std::map<std::string, state_map> saved;
  std::string last;  ///< the file written last ("" when the epoch wrote none)
  void save_checkpoint(const std::filesystem::path& path, checkpoint_content) override {
    std::ofstream(path) << "checkpoint\n";
    last = path.filename().string();
    saved[last] = saver->state_dict();
  }
};

/// The files in `dir` but last_checkpoint: epoch files first, each kind by number (by_name:
/// sorted by name, as Python's sorted()).
std::string files_in(const std::filesystem::path& dir, bool by_name = false) {
  std::vector<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(dir))
    if (item.path().filename() != "last_checkpoint")
      names.push_back(item.path().filename().string());
  auto key = [&](const std::string& n) {
    return by_name ? std::tuple(false, std::size_t{0}, n)
                   : std::tuple(n.starts_with("best"), n.size(), n);
  };
  std::sort(names.begin(), names.end(), [&](auto& x, auto& y) { return key(x) < key(y); });
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

/// The context at the end of epoch `epoch` (0-based) of `epochs`, validated with `score`; 10
/// training steps an epoch.
TrainerContext epoch_end(std::int64_t epoch, std::int64_t epochs, const std::string& score,
                         const std::filesystem::path& dir, StandInTrainer& trainer) {
  TrainerContext ctx;
  ctx.epoch = epoch;
  ctx.completed_epochs = epoch + 1;
  ctx.global_step = 10 * (epoch + 1);
  ctx.total_epochs = epochs;
  ctx.validated = true;
  ctx.val_scores = {{"score", number(score)}};
  ctx.work_dir = dir;
  ctx.trainer = &trainer;
  return ctx;
}

/// A CheckpointSaver with `o` over one epoch per score (words), in a fresh folder `dir`:
/// `describe(saver, dir)` after each epoch, '|'-joined. After epoch `resume_at`, a new hook
/// goes on from `state_at(trainer)`, the state stored in a file that epoch wrote.
template <class Describe, class StateAt>
std::string run_saver(const checkpoint_saver_options& o, const std::vector<std::string>& scores,
                      std::int64_t resume_at, const std::filesystem::path& dir, Describe describe,
                      StateAt state_at) {
  std::filesystem::create_directories(dir);
  auto saver = std::make_unique<CheckpointSaver>(o);
  StandInTrainer trainer;
  trainer.saver = saver.get();
  std::string out;
  const auto epochs = static_cast<std::int64_t>(scores.size());
  for (std::int64_t epoch = 0; epoch < epochs; ++epoch) {
    TrainerContext ctx =
        epoch_end(epoch, epochs, scores[static_cast<std::size_t>(epoch)], dir, trainer);
    trainer.last.clear();
    saver->save_epoch(ctx);
    out += (epoch == 0 ? "" : "|") + describe(*saver, dir);
    if (epoch + 1 == resume_at) {
      const state_map state = state_at(trainer);
      saver = std::make_unique<CheckpointSaver>(o);
      saver->load_state_dict(state);
      trainer.saver = saver.get();
    }
  }
  std::filesystem::remove_all(dir);
  return out;
}

/// The files after each epoch for one case (the words of a line of `parity checkpoint -`).
std::string checkpoint_files(const std::vector<std::string>& a, const std::filesystem::path& dir) {
  checkpoint_saver_options o{.interval = std::stoll(a.at(0)),
                             .max_keep_ckpts = std::stoll(a.at(1)),
                             .save_last = a.at(2) == "1",
                             .save_begin = std::stoll(a.at(3))};
  if (a.at(4) != "none") {
    o.save_best = "score";
    o.rule = a.at(4);
  }
  const auto resume_at = std::stoll(a.at(5));
  return run_saver(
      o, {a.begin() + 7, a.end()}, resume_at, dir,
      [](const CheckpointSaver&, const std::filesystem::path& d) { return files_in(d); },
      [&](const StandInTrainer& trainer) {  // the state in epoch_{RESUME_AT}.pt
        const auto from = trainer.saved.find(fmt::format("epoch_{}.pt", resume_at));
        if (from == trainer.saved.end())
          throw std::invalid_argument(
              fmt::format("epoch {} wrote no checkpoint to resume from", resume_at));
        return from->second;
      });
}

/// Runs `answer` (words of a line, a fresh folder) on each line of stdin, printing its line.
template <class Answer>
int for_each_case(Answer answer) {
  std::string folder = (std::filesystem::temp_directory_path() / "parity-XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) throw std::runtime_error("cannot make " + folder);
  struct Cleanup {
    std::string folder;
    ~Cleanup() { std::filesystem::remove_all(folder); }
  } cleanup{folder};
  std::string line;
  for (int n = 0; std::getline(std::cin, line); ++n) {
    std::istringstream words(line);
    std::vector<std::string> a{std::istream_iterator<std::string>(words), {}};
    if (!a.empty())
      std::cout << answer(a, std::filesystem::path(folder) / std::to_string(n)) << "\n";
  }
  return 0;
}

/// `parity top_k -`: per line "K RULE RESUME_AT EPOCHS SCORE...", the files after each epoch
/// and the best one ("files;best", '|'-joined) for save_top_k K, named as parity_top_k.py names
/// Lightning's; a resume loads the state in the file written at epoch RESUME_AT.
std::string top_k_files(const std::vector<std::string>& a, const std::filesystem::path& dir) {
  const checkpoint_saver_options o{
      .interval = 0,
      .save_last = false,
      .save_best = "score",
      .rule = a.at(1),
      .save_top_k = std::stoll(a.at(0)),
      .best_filename_tmpl = "best_{metric}_{score:.3f}_epoch_{epoch}.pt"};
  const auto resume_at = std::stoll(a.at(2));
  return run_saver(
      o, {a.begin() + 4, a.end()}, resume_at, dir,
      [](const CheckpointSaver& saver, const std::filesystem::path& d) {
        return files_in(d, /*by_name=*/true) + ";" + saver.best_file();
      },
      [&](const StandInTrainer& trainer) {
        if (trainer.last.empty())
          throw std::invalid_argument(
              fmt::format("epoch {} wrote no file to resume from", resume_at));
        return trainer.saved.at(trainer.last);
      });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: parity early_stopping|scheduler|clip|metrics|ema|checkpoint|top_k|warmup "
                 "ARG...\n";
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  hookforge::set_warning_sink([](std::string_view) {});
  try {
    if (command == "early_stopping") return early_stopping();
    if (command == "scheduler") return scheduler(args);
    if (command == "clip") return clip(args);
    if (command == "metrics") return metrics(args);
    if (command == "ema") return ema(args);
    if (command == "checkpoint") return for_each_case(checkpoint_files);
    if (command == "top_k") return for_each_case(top_k_files);
    if (command == "warmup") return warmup(args);
  } catch (const std::exception& e) {
    std::cerr << "parity: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "parity: unknown command " << command << "\n";
  return 2;
}
