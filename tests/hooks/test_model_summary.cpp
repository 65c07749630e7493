// Tests of ModelSummary (hooks/model_summary.hpp): the table for a model's modules at each
// depth, the counts as Lightning writes them, a GAN's two modules, and the hook under a
// Trainer, where default_hooks prints it unless told not to.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>  // torch before Catch: glog defines CHECK too
#include <catch2/catch.hpp>

#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/hooks/model_summary.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

#include "../torch/file_testing.hpp"

namespace {

using Catch::Contains;
using hookforge::Entry;
using hookforge::ModelSummary;

struct NetImpl : torch::nn::Module {
  NetImpl()
      : body(register_module("body",
                             torch::nn::Sequential(torch::nn::Linear(10, 100), torch::nn::Tanh(),
                                                   torch::nn::Linear(100, 1)))),
        scale(register_parameter("scale", torch::ones({1}), /*requires_grad=*/false)) {}
  torch::Tensor forward(const Entry& b) { return body->forward(b.at("input")) * scale; }
  torch::nn::Sequential body;
  torch::Tensor scale;
};
TORCH_MODULE(Net);

/// What `f` writes to a FILE*, as text.
template <class F>
std::string printed(F&& f) {
  std::FILE* file = std::tmpfile();
  f(file);
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  std::fclose(file);
  return text;
}

}  // namespace

TEST_CASE("ModelSummary lists the modules to max_depth with Lightning's counts",
          "[hooks][summary]") {
  CHECK(hookforge::detail::summary::readable_count(66) == "66");
  CHECK(hookforge::detail::summary::readable_count(1201) == "1.2 K");
  CHECK(hookforge::detail::summary::readable_count(2'100'000) == "2.1 M");

  Net net;
  // 10*100 + 100 + 100 + 1 = 1201 trainable, the frozen scale 1: 1202 floats, 4808 bytes.
  const auto one = ModelSummary::format({{"model", net.ptr().get()}}, 1);
  CHECK_THAT(one, Contains("0 | body | Sequential | 1.2 K  | 1.2 K     | train | 0.005"));
  CHECK_THAT(one, Contains("1.2 K     Trainable params\n1         Non-trainable params\n"
                           "1.2 K     Total params\n0.005     Total params size (MB)\n"));
  CHECK_THAT(one, !Contains("body.0"));

  net->eval();
  const auto all = ModelSummary::format({{"model", net.ptr().get()}}, -1);
  CHECK_THAT(all, Contains("1 | body.0 | Linear     | 1.1 K  | 1.1 K     | eval  | 0.004"));
  CHECK_THAT(all, Contains("2 | body.1 | Tanh       | 0      | 0         | eval  | 0.000"));

  const auto totals = ModelSummary::format({{"model", net.ptr().get()}}, 0);
  CHECK_THAT(totals, !Contains("body"));
  CHECK_THAT(totals, Contains("1.2 K     Total params"));

  Net other;  // a GAN's two modules: each a row under its section, then its children
  const auto pair = ModelSummary::format(
      {{"generator", net.ptr().get()}, {"discriminator", other.ptr().get()}}, 1);
  CHECK_THAT(pair, Contains("0 | generator          | Net"));
  CHECK_THAT(pair, Contains("1 | generator.body     | Sequential"));
  CHECK_THAT(pair, Contains("2 | discriminator      | Net"));
  CHECK_THAT(pair, Contains("2.4 K     Total params"));

  CHECK_THAT(ModelSummary::format({}, 1), Contains("without a torch::nn::Module"));
}

TEST_CASE("default_hooks prints the summary as training begins, unless told not to",
          "[hooks][summary]") {
  const std::vector<Entry> data{
      Entry{{"input", torch::ones({4, 10})}, {"target", torch::ones({4, 1})}}};
  auto mse = [](const Entry& b) { return torch::mse_loss(b.at("output"), b.at("target")); };
  const auto run = [&](std::optional<hookforge::model_summary_options> summary) {
    return printed([&](std::FILE* file) {
      if (summary) summary->out = file;
      Net net;
      torch::optim::SGD sgd(net->parameters(), 0.1);
      hookforge::TrainingEpochRunner train(sgd, {});
      hookforge::no_validation none;
      hookforge::default_hooks defaults({.summary = summary});
      tfx::temp_dir dir("hookforge-summary-test");  // the logger's and saver's files
      hookforge::Trainer trainer(net, train, none, {.epochs = 1, .work_dir = dir.path},
                                 defaults.trainer());
      trainer.fit(data, mse);
    });
  };
  CHECK_THAT(run(hookforge::model_summary_options{}), Contains("0 | body | Sequential"));
  CHECK(run(std::nullopt).empty());
}
