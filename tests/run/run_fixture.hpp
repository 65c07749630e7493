// The base config of the run tests and how they build it: a configured run built in process,
// as hookforge-run builds it (test_run.cpp, test_fields.cpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/run.hpp"

#include "../torch/file_testing.hpp"

namespace run_tests {

namespace cfg = hookforge::config;
namespace run = hookforge::run;

// 4 training batches and 2 validation batches an epoch, 2 epochs.
inline constexpr std::string_view base_config = R"(
system: {seed: 0}
data:
  train: {_target: Sine, params: {count: 64, seed: 1}}
  val: {_target: Sine, params: {count: 32, seed: 2}}
model: {_target: MLP, params: {hidden: [8]}}
optimizer: {_target: SGD, params: {model: "${ref:model}", lr: 0.01}}
hooks:
  counter: {_target: StepCounter}
training_runner:
  _target: TrainingEpochRunner
  params: {optimizer: "${ref:optimizer}", hooks: []}
validation_runner:
  _target: ValidationEpochRunner
  params: {hooks: []}
trainer:
  _target: Trainer
  params:
    model: ${ref:model}
    training_runner: ${ref:training_runner}
    validation_runner: ${ref:validation_runner}
    train_loader: {_target: DataLoader, params: {dataset: "${ref:data.train}", batch_size: 16}}
    val_loader: {_target: DataLoader, params: {dataset: "${ref:data.val}", batch_size: 16}}
    loss: {_target: MSE}
    epochs: 2
)";

struct built_run {
  std::unique_ptr<cfg::builder> b;
  std::shared_ptr<run::TrainerComponent> trainer;

  template <class H>
  std::shared_ptr<H> hook(std::string_view path) {
    return std::static_pointer_cast<H>(b->get<cfg::hook_handle>(path).object());
  }
};

inline built_run build(const std::vector<std::string>& sets, bool strict = false) {
  run::link_registrations();
  run::settings() = {};
  static tfx::temp_dir work("hookforge-run-tests");  // this process's, removed at exit
  run::settings().work_dir = work.path;
  auto doc = cfg::document::parse(base_config, "test.yaml");
  for (const auto& s : sets) doc.set(s);
  built_run r;
  r.b = std::make_unique<cfg::builder>(std::move(doc), cfg::build_options{.strict = strict});
  torch::manual_seed(0);
  r.trainer = r.b->get<std::shared_ptr<run::TrainerComponent>>("trainer");
  return r;
}

inline std::string error_of(const std::vector<std::string>& sets, bool strict = false) {
  try {
    build(sets, strict);
  } catch (const cfg::config_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace run_tests
