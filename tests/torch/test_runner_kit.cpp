// The custom runner of docs/runners.md ("Writing a runner"), compiled and run: keep the two
// in step. Also checks what runner_base does for it.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too
#include "file_testing.hpp"

#include <catch2/catch.hpp>

#include "hookforge/hooks/default_hooks.hpp"

// --- begin docs/runners.md ---
using hookforge::points::on_epoch_end;
using hookforge::points::on_epoch_start;
using hookforge::points::on_post_step;
using hookforge::points::on_pre_step;

HOOKFORGE_POINT(on_post_loss);  // a point of this runner's own

struct NoisyContext : hookforge::epoch_counters {
  hookforge::Entry entry;
  double noise = 0.0;                            // hooks set it at on_pre_step
  torch::Tensor loss;                            // at on_post_loss: hooks may scale or replace it
  torch::optim::Optimizer* optimizer = nullptr;  // built-in hooks read it (learning rates)
  hookforge::score_accumulator running_scores;
  hookforge::epoch_scores scores;  // at on_epoch_end
  bool stop_training = false;
};

/// Trains on inputs with Gaussian noise of a strength hooks choose per batch.
template <class... Hooks>
class NoisyInputRunner : public hookforge::runner_base<NoisyInputRunner<Hooks...>, Hooks...> {
  using base = hookforge::runner_base<NoisyInputRunner, Hooks...>;

 public:
  using hook_points =
      hookforge::point_list<on_epoch_start, on_pre_step, on_post_loss, on_post_step, on_epoch_end>;
  // What the batch holds where: Trainer::fit() checks its hooks' batch fields against it.
  using batch_stages = hookforge::batch_stages<hookforge::loaded_at<on_pre_step>,
                                               hookforge::output_at<on_post_loss, on_post_step>>;
  using Ctx = NoisyContext;

  NoisyInputRunner(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : base(std::move(hooks)...), optimizer_(&optimizer) {}

  template <class Model, class Loader, class Criterion>
  hookforge::epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch,
                                    Criterion&& criterion) {
    hookforge::set_training_mode(model, true);
    Ctx ctx;
    ctx.optimizer = optimizer_;
    this->start_epoch(ctx, epoch, loader);  // counters, then on_epoch_start
    auto batches =
        this->training_batches(ctx, loader, [&](hookforge::Entry&& batch, bool /*last*/) {
          ctx.entry = std::move(batch);  // batch_idx and global_step are already set
          ctx.noise = 0.0;
          this->hooks_.template fire<on_pre_step>(ctx);
          auto input = ctx.entry.at("input");
          ctx.entry.set("input", input + ctx.noise * torch::randn_like(input));
          hookforge::forward_into(model, ctx.entry);
          ctx.loss = criterion(ctx.entry);
          this->hooks_.template fire<on_post_loss>(ctx);
          optimizer_->zero_grad();
          ctx.loss.backward();
          optimizer_->step();
          ctx.running_scores.add({{"loss", ctx.loss.detach()}}, ctx.entry.batch_size());
          this->hooks_.template fire<on_post_step>(ctx);
        });
    return this->finish_epoch(ctx, batches);  // ctx.scores, then on_epoch_end
  }

  torch::optim::Optimizer& optimizer() { return *optimizer_; }

 private:
  torch::optim::Optimizer* optimizer_;
};

template <class... Hooks>
NoisyInputRunner(torch::optim::Optimizer&, Hooks...) -> NoisyInputRunner<Hooks...>;

/// A hook for it: noise that fades over the run.
struct FadingNoise {
  double start;
  void set(NoisyContext& ctx) {
    ctx.noise =
        start * (1.0 - double(ctx.epoch) / double(std::max<std::int64_t>(ctx.total_epochs, 1)));
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(set, on_pre_step));
};
// --- end docs/runners.md ---

namespace {
/// Records the counters it sees at each point.
struct CounterLog {
  std::vector<std::string>* log;
  void start(NoisyContext& c) {
    log->push_back("start e" + std::to_string(c.epoch) + " n" + std::to_string(c.num_batches));
  }
  void loss(NoisyContext& c) {
    log->push_back("loss b" + std::to_string(c.batch_idx) + " g" + std::to_string(c.global_step));
  }
  void end(NoisyContext& c) { log->push_back("end " + std::to_string(c.scores.count("loss"))); }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(start, on_epoch_start),
                                                       HOOKFORGE_HOOKS_INTO(loss, on_post_loss),
                                                       HOOKFORGE_HOOKS_INTO(end, on_epoch_end));
};
}  // namespace

TEST_CASE("a runner written with runner_base: counters, points, scores", "[runner_kit]") {
  auto data = tfx::regression_data(2, 4);
  torch::manual_seed(1);
  tfx::Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  std::vector<std::string> log;
  NoisyInputRunner runner(sgd, FadingNoise{0.1}, CounterLog{&log});
  runner.set_total_epochs(2);
  auto first = runner.run_epoch(model, data, 0, tfx::mse);
  auto second =
      runner.run_epoch(model, data, 1, [](const hookforge::Entry& e) { return tfx::mse(e); });
  CHECK(log == std::vector<std::string>{"start e0 n2", "loss b0 g0", "loss b1 g1", "end 1",
                                        "start e1 n2", "loss b0 g2", "loss b1 g3", "end 1"});
  CHECK(first.batches == 2);
  CHECK(second.scores.at("loss") < first.scores.at("loss"));
  CHECK(runner.global_step() == 4);
  CHECK(runner.total_epochs() == 2);
  CHECK(runner.hooks().format_table().find("on_post_loss") != std::string::npos);
}

TEST_CASE("the default hooks on a runner of one's own: train bar, step rows with its loss and lr",
          "[runner_kit][hooks]") {
  auto data = tfx::regression_data(3, 4);
  torch::manual_seed(1);
  tfx::Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.05);
  tfx::temp_dir scratch("hookforge-runner-kit-defaults");
  const auto dir = scratch.path;
  std::ostringstream out;
  hookforge::default_hooks defaults(
      {.progress = {.stream = &out}, .logger = {.interval = 1, .out_dir = dir}});
  NoisyInputRunner runner(sgd, FadingNoise{0.1}, defaults.training());
  runner.set_total_epochs(1);
  runner.run_epoch(model, data, 0, tfx::mse);
  CHECK_THAT(out.str(), Catch::Contains("train epoch 1/1 done: 3 batches"));

  std::ifstream steps(dir / "steps.csv");
  REQUIRE(steps.good());
  std::vector<std::string> rows;
  for (std::string line; std::getline(steps, line);) rows.push_back(line);
  REQUIRE(rows.size() == 4);  // the header and one row per batch
  CHECK(rows[0] == "epoch,batch,step,loss,lr");
  CHECK(rows[3].rfind("1,3,3,", 0) == 0);
  std::filesystem::remove_all(dir);
}
