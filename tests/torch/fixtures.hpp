// Models, data and recording hooks shared by the LibTorch tests.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "hookforge/torch.hpp"

namespace tfx {

namespace pts = hookforge::points;
using hookforge::Entry;

/// y = x W^T + b as a module taking an Entry.
struct RegressorImpl : torch::nn::Module {
  explicit RegressorImpl(int in = 2, int out = 1)
      : linear(register_module("linear", torch::nn::Linear(in, out))) {}
  torch::Tensor forward(const Entry& e) { return linear(e.at("input")); }
  torch::nn::Linear linear;
};
TORCH_MODULE(Regressor);

/// A small MLP with dropout (so RNG state matters for exact resume).
struct MlpImpl : torch::nn::Module {
  MlpImpl()
      : fc1(register_module("fc1", torch::nn::Linear(2, 16))),
        drop(register_module("drop", torch::nn::Dropout(0.1))),
        fc2(register_module("fc2", torch::nn::Linear(16, 1))) {}
  torch::Tensor forward(const Entry& e) { return fc2(drop(torch::relu(fc1(e.at("input"))))); }
  torch::nn::Linear fc1;
  torch::nn::Dropout drop;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Mlp);

/// `batches` batches of `size` samples of y = 3 x0 - 2 x1 + 0.5 (+ noise), deterministic.
inline std::vector<Entry> regression_data(int batches, int size, double noise = 0.0, int seed = 1) {
  torch::manual_seed(seed);
  std::vector<Entry> data;
  for (int i = 0; i < batches; ++i) {
    auto x = torch::randn({size, 2});
    auto y = (x.select(1, 0) * 3.0 - x.select(1, 1) * 2.0 + 0.5).unsqueeze(1) +
             noise * torch::randn({size, 1});
    data.push_back(Entry{{"input", x}, {"target", y}});
  }
  return data;
}

inline torch::Tensor mse(const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); }

/// Appends "<prefix>:<point>" to a shared log; one recorder type per component.
struct TrainRecorder {
  std::vector<std::string>* log;
  void epoch_start(hookforge::TrainingContext&) { log->push_back("train:on_epoch_start"); }
  void pre_step(hookforge::TrainingContext&) { log->push_back("train:on_pre_step"); }
  void post_forward(hookforge::TrainingContext&) { log->push_back("train:on_post_forward"); }
  void post_backward(hookforge::TrainingContext&) { log->push_back("train:on_post_backward"); }
  void post_step(hookforge::TrainingContext&) { log->push_back("train:on_post_step"); }
  void epoch_end(hookforge::TrainingContext&) { log->push_back("train:on_epoch_end"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(epoch_start, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(pre_step, pts::on_pre_step),
                          HOOKFORGE_HOOKS_INTO(post_forward, pts::on_post_forward),
                          HOOKFORGE_HOOKS_INTO(post_backward, pts::on_post_backward),
                          HOOKFORGE_HOOKS_INTO(post_step, pts::on_post_step),
                          HOOKFORGE_HOOKS_INTO(epoch_end, pts::on_epoch_end));
};

struct ValRecorder {
  std::vector<std::string>* log;
  void epoch_start(hookforge::InferenceContext&) { log->push_back("val:on_epoch_start"); }
  void post_step(hookforge::InferenceContext&) { log->push_back("val:on_post_step"); }
  void epoch_end(hookforge::InferenceContext&) { log->push_back("val:on_epoch_end"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(epoch_start, pts::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(post_step, pts::on_post_step),
                          HOOKFORGE_HOOKS_INTO(epoch_end, pts::on_epoch_end));
};

struct TrainerRecorder {
  std::vector<std::string>* log;
  void began(hookforge::TrainerContext&) { log->push_back("trainer:on_training_began"); }
  void epoch_finished(hookforge::TrainerContext&) {
    log->push_back("trainer:on_trainer_epoch_finished");
  }
  void finished(hookforge::TrainerContext&) { log->push_back("trainer:on_training_finished"); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(began, pts::on_training_began),
                          HOOKFORGE_HOOKS_INTO(epoch_finished, pts::on_trainer_epoch_finished),
                          HOOKFORGE_HOOKS_INTO(finished, pts::on_training_finished));
};

/// Copies of a module's parameters, and bit-for-bit comparison of two such lists.
inline std::vector<torch::Tensor> snapshot(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}
inline bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

/// Reshuffles its batches with the torch RNG at every pass, as a real loader would.
struct ShuffledLoader {
  std::vector<Entry> data;
  std::vector<Entry> order;
  std::vector<Entry>::iterator begin() {
    auto perm = torch::randperm(static_cast<std::int64_t>(data.size()), torch::kLong);
    order.clear();
    for (std::int64_t i = 0; i < perm.size(0); ++i)
      order.push_back(data[perm[i].item<std::int64_t>()]);
    return order.begin();
  }
  std::vector<Entry>::iterator end() { return order.end(); }
};

/// Two Adam optimisers hold the same state, parameter by parameter, and the same learning rates.
inline bool same_adam_state(torch::optim::Adam& a, torch::optim::Adam& b) {
  auto key = [](const torch::Tensor& p) { return hookforge::compat::optimizer_state_key(p); };
  const auto pa = hookforge::optimizer_parameters(a), pb = hookforge::optimizer_parameters(b);
  if (pa.size() != pb.size() || a.state().size() != b.state().size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const bool ha = a.state().count(key(pa[i])) > 0, hb = b.state().count(key(pb[i])) > 0;
    if (ha != hb) return false;
    if (!ha) continue;
    auto& sa = static_cast<torch::optim::AdamParamState&>(*a.state().at(key(pa[i])));
    auto& sb = static_cast<torch::optim::AdamParamState&>(*b.state().at(key(pb[i])));
    if (sa.step() != sb.step() || !torch::equal(sa.exp_avg(), sb.exp_avg()) ||
        !torch::equal(sa.exp_avg_sq(), sb.exp_avg_sq()))
      return false;
  }
  for (std::size_t g = 0; g < a.param_groups().size(); ++g)
    if (a.param_groups()[g].options().get_lr() != b.param_groups()[g].options().get_lr())
      return false;
  return true;
}

/// Writes a state_dict to pickle bytes and reads it back, as a checkpoint file would.
inline hookforge::state_map through_pickle(const hookforge::state_map& state) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [key, value] : state) dict.insert(c10::IValue(key), value);
  const auto bytes = torch::pickle_save(dict);
  hookforge::state_map loaded;
  for (const auto& entry : torch::pickle_load(bytes).toGenericDict())
    loaded.emplace(entry.key().toStringRef(), entry.value());
  return loaded;
}

/// A stateful hook: counts optimiser steps, saved in checkpoints.
struct StepCounter {
  std::int64_t steps = 0;
  double last_loss = 0;
  void count(hookforge::TrainingContext& ctx) {
    if (ctx.optimizer_stepped) ++steps;
  }
  hookforge::state_map state_dict() const { return {{"steps", steps}}; }
  void load_state_dict(const hookforge::state_map& s) { steps = s.at("steps").toInt(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

}  // namespace tfx
