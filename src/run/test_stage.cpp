// See test_stage.hpp.
#include "test_stage.hpp"

#include <cstdint>
#include <string_view>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "report.hpp"
#include "run_checkpoints.hpp"

#include "hookforge/config/error.hpp"
#include "hookforge/config/register.hpp"
#include "hookforge/config/section.hpp"
#include "hookforge/hooks/latest_checkpoint.hpp"
#include "hookforge/torch/io/atomic_file.hpp"

namespace hookforge::run::detail {

namespace fs = std::filesystem;

std::optional<test_settings> read_test_settings(config::builder& b,
                                                const TrainerComponent& trainer) {
  const auto section = config::section_value(b, "test");
  if (!section) return std::nullopt;
  using s = test_settings;
  auto test = config::read_section<s>(
      b, "test", config::field("loader", &s::loader, config::required),
      config::field("checkpoint", &s::checkpoint)
          .check([](const std::string& w) { return w == "best" || w == "last"; },
                 "best (the run's best checkpoint) or last (its last weights)"));
  if (!trainer.config().validation_runner)
    throw config::config_error(section->where(), "test",
                               "a trainer with a validation_runner, whose metrics score the test",
                               "a trainer without one");
  return test;
}

namespace {

/// The file the test loads ("" : none, the weights as they are), and why where it is not
/// the one asked for.
fs::path checkpoint_to_test(const test_settings& test, const fs::path& checkpoint_dir,
                            bool speaks) {
  if (test.checkpoint != "best") return {};
  const auto last = latest_checkpoint(checkpoint_dir);
  if (last)
    if (auto best = best_checkpoint(checkpoint_dir, *last)) return *best;
  if (speaks)
    fmt::print(
        "hookforge-run: {} holds no best checkpoint (CheckpointSaver's save_best): the test "
        "takes the last weights\n",
        checkpoint_dir.string());
  return {};
}

}  // namespace

void run_test_stage(TrainerComponent& trainer, const test_settings& test,
                    const fs::path& checkpoint_dir, const fs::path& work_dir, bool speaks) {
  const fs::path file = checkpoint_to_test(test, checkpoint_dir, speaks);
  if (!file.empty()) trainer.load_checkpoint(file);
  const epoch_scores scores = trainer.test(*test.loader);
  if (!speaks) return;
  const std::string name =
      file.empty() ? std::string("the last weights") : file.filename().string();
  fmt::print("{}\n", test_line(scores, name));
  nlohmann::json out = {{"checkpoint", file.empty() ? std::string() : file.filename().string()},
                        {"epochs", trainer.completed_epochs()},
                        {"scores", nlohmann::json::object()}};
  for (const auto& [score, value] : scores) out["scores"][score] = value;
  write_file_atomically(work_dir / "test_metrics.json", out.dump(2) + "\n");
}

}  // namespace hookforge::run::detail
