// src/run/system.cpp — see system.hpp.
#include "system.hpp"

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/config/error.hpp"
#include "hookforge/config/section.hpp"
#include "hookforge/run/machine.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/run/values.hpp"

namespace hookforge::run {

template <>
struct enum_names<detail::device_choice> {
  static constexpr std::pair<std::string_view, detail::device_choice> values[] = {
      {"auto", detail::device_choice::automatic},
      {"cpu", detail::device_choice::cpu},
      {"cuda", detail::device_choice::cuda}};
};

namespace detail {

namespace {

namespace cfg = hookforge::config;
namespace fs = std::filesystem;

bool cuda_available() { return torch::cuda::is_available(); }

torch::Device resolve_device(device_choice choice) {
  switch (choice) {
    case device_choice::cpu:
      return torch::kCPU;
    case device_choice::cuda:
      return torch::kCUDA;
    case device_choice::automatic:
      break;
  }
  return cuda_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

}  // namespace

std::optional<device_choice> device_option(const command_line& cli) {
  if (!cli.device) return std::nullopt;
  for (const auto& [name, choice] : enum_names<device_choice>::values)
    if (name == *cli.device) {
      if (choice == device_choice::cuda && !cuda_available())
        throw usage_error(
            "--device cuda: CUDA is not available on this machine (torch::cuda::is_available() is "
            "false); use --device cpu or --device auto");
      return choice;
    }
  throw usage_error(fmt::format("--device must be cpu, cuda or auto, got '{}'", *cli.device));
}

namespace {

/// The config's `system` section.
struct system_options {
  device_choice device = device_choice::automatic;
  std::int64_t seed = 0;
  std::int64_t threads = 0;  ///< 0: LibTorch's default
  std::optional<fs::path> work_dir;
  bool mixed_precision = false;
};

system_options read_system(cfg::builder& b) {
  using s = system_options;
  return cfg::read_section<s>(
      b, "system", cfg::field("device", &s::device), cfg::field("seed", &s::seed),
      cfg::field("threads", &s::threads)
          .check(within_cores,
                 fmt::format("a number of threads from 0 to {} (this machine's cores; 0: "
                             "LibTorch's default)",
                             machine_cores())),
      cfg::field("work_dir", &s::work_dir), cfg::field("mixed_precision", &s::mixed_precision));
}

}  // namespace

void apply_system(cfg::builder& b, std::optional<device_choice> cli_device,
                  const rank_setup& ranks) {
  system_options system = read_system(b);
  if (cli_device) system.device = *cli_device;
  if (!cli_device && system.device == device_choice::cuda && !cuda_available()) {
    const auto v = *cfg::section_value(b, "system")->find("device");
    throw cfg::config_error(v.where(), v.key(),
                            "a device this machine has (cpu or auto: CUDA is not available, "
                            "torch::cuda::is_available() is false)",
                            v.describe());
  }
  auto& s = settings();
  s.device = resolve_device(system.device);
  if (s.device.is_cuda() && ranks.world_size > 1) {
    // LOCAL_RANK's GPU, else rank modulo the GPUs (as hookforge::distributed's NCCL backend
    // picks it).
    const int gpus = static_cast<int>(torch::cuda::device_count());
    const auto local = ranks.env.local_rank;
    s.device = torch::Device(torch::kCUDA,
                             static_cast<c10::DeviceIndex>(local ? *local : ranks.rank % gpus));
  }
  s.mixed_precision = system.mixed_precision;
  s.work_dir = system.work_dir ? *system.work_dir : fs::path("runs") / "default";
  if (system.threads > 0) torch::set_num_threads(static_cast<int>(system.threads));
  torch::manual_seed(static_cast<std::uint64_t>(system.seed));
}

}  // namespace detail

}  // namespace hookforge::run
