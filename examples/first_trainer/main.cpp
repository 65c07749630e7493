// Route B of docs/getting-started.md: hand the loop to hookforge's Trainer. You write the
// model, the data and the criterion; the built-in runners do the epochs (forward, loss,
// backward, update, validation) and fire the hooks, and default_hooks adds progress bars,
// an epoch line, metrics.csv and checkpoints.
//
//   hookforge_example_first_trainer                  # on the CPU
//   hookforge_example_first_trainer --device cuda    # on the first GPU (cuda:1 the second...)
#include <hookforge/hooks/default_hooks.hpp>
#include <hookforge/hooks/gradient_clip.hpp>
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

using hookforge::Entry;  // a batch: named tensors ("input", "target", later "output")

// The model: a torch module whose forward takes the batch and picks its input field. Give
// the Trainer the module itself, so that it can save its weights and switch it to eval().
struct NetImpl : torch::nn::Module {
  NetImpl()
      : body(register_module("body",
                             torch::nn::Sequential(torch::nn::Linear(1, 64), torch::nn::Tanh(),
                                                   torch::nn::Linear(64, 64), torch::nn::Tanh(),
                                                   torch::nn::Linear(64, 1)))) {}
  torch::Tensor forward(const Entry& batch) { return body->forward(batch.at("input")); }
  torch::nn::Sequential body;
};
TORCH_MODULE(Net);

// The data: any range of Entry is a loader; here y = sin(3x) in batches of 32, on the CPU
// (the runners move each batch to their device).
std::vector<Entry> make_batches(int batches, std::uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i) {
    auto x = torch::rand({32, 1}) * 4 - 2;
    data.push_back(Entry{{"input", x}, {"target", torch::sin(3 * x)}});
  }
  return data;
}

// `--device NAME` from the command line: "cpu" (the default), "cuda", "cuda:1"...; none when
// the name is not a device or CUDA is asked for where there is none.
std::optional<torch::Device> device_from(int argc, char** argv) {
  std::string name = "cpu";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view(argv[i]) == "--device") name = argv[i + 1];
  std::optional<torch::Device> device;
  try {
    device = torch::Device(name);
  } catch (const std::exception&) {
    fmt::print(stderr, "--device {}: not a device name (cpu, cuda, cuda:1...)\n", name);
    return std::nullopt;
  }
  if (device->is_cuda() && !torch::cuda::is_available()) {
    fmt::print(stderr,
               "--device {}: CUDA is not available here (a CPU-only LibTorch, or no GPU or "
               "driver); run without --device to train on the CPU\n",
               name);
    return std::nullopt;
  }
  return device;
}

int main(int argc, char** argv) {
  const auto found = device_from(argc, argv);
  if (!found) return 2;
  const torch::Device device = *found;
  torch::manual_seed(0);

  // Move the model before making the optimiser, so that it holds the moved parameters.
  Net net;
  net->to(device);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(0.01));
  // The criterion: a callable on the batch, which now holds the model's "output" too.
  auto criterion = [](const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); };

  // Progress bars, an epoch line, metrics.csv/.jsonl and a checkpoint per epoch (2 kept),
  // all in the work directory.
  auto work_dir = std::filesystem::temp_directory_path() / "hookforge-first-trainer";
  std::filesystem::remove_all(work_dir);
  hookforge::default_hooks defaults({.checkpoint = {.max_keep_ckpts = 2}});

  // Each runner moves batches to `device`; a hook of your own (or a built-in one, as
  // GradientClip here) goes beside the default ones.
  hookforge::TrainingEpochRunner train(adam, {.device = device}, defaults.training(),
                                       hookforge::GradientClip{1.0});
  hookforge::ValidationEpochRunner validate({.device = device}, defaults.validation());
  hookforge::Trainer trainer(net, train, validate, {.epochs = 20, .work_dir = work_dir},
                             defaults.trainer());

  auto result = trainer.fit(make_batches(16, 1), make_batches(4, 2), criterion);
  fmt::print("trained on {}: validation loss {:.4f} after {} epochs; files in {}\n", device.str(),
             result.val_scores.at("loss"), result.completed_epochs, work_dir.string());
  return result.val_scores.at("loss") < 0.05 ? 0 : 1;
}
