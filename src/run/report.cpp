// See report.hpp.
#include "report.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "signal_stop.hpp"

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/hooks/latest_checkpoint.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"

namespace hookforge::run::detail {

namespace {

bool is_psnr(std::string_view name) { return metric_has_word(name, "psnr"); }

std::string show_score(std::string_view name, double v) {
  if (is_psnr(name)) return fmt::format("{:.2f} dB", v);
  if (metric_has_word(name, "ssim")) return fmt::format("{:.4f}", v);
  return fmt::format("{:.4g}", v);
}

std::string label_of(std::string_view name) {
  static constexpr std::string_view upper[] = {"psnr", "ssim", "mae", "mse"};
  for (auto u : upper)
    if (name == u) {
      std::string out(name);
      for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return out;
    }
  return std::string(name);
}

/// Each score, compared ones first: a score `s` with its baseline `<b>_s` beside it.
std::string one_set_text(const epoch_scores& scores) {
  std::map<std::string, std::pair<std::string, double>>
      baseline;  // score -> (baseline prefix, value)
  std::vector<std::string> is_baseline;
  for (const auto& [name, value] : scores)
    for (const auto& [other, other_value] : scores) {
      if (other.size() > name.size() + 1 && other.ends_with("_" + name)) {
        baseline.emplace(
            name, std::make_pair(other.substr(0, other.size() - name.size() - 1), other_value));
        is_baseline.push_back(other);
      }
    }
  std::vector<std::string> parts;
  // Compared scores first (the point of a baseline), then the rest.
  for (const auto& [name, b] : baseline) {
    const double v = scores.at(name);
    const double d = v - b.second;
    std::string diff = is_psnr(name) ? fmt::format("{:+.2f} dB", d) : fmt::format("{:+.4f}", d);
    parts.push_back(fmt::format("{} {} ({} {}, {})", label_of(name), show_score(name, v), b.first,
                                show_score(name, b.second), diff));
  }
  for (const auto& [name, value] : scores) {
    if (baseline.count(name) ||
        std::find(is_baseline.begin(), is_baseline.end(), name) != is_baseline.end())
      continue;
    parts.push_back(fmt::format("{} {}", label_of(name), show_score(name, value)));
  }
  return hookforge::join_names(parts, ", ");
}

/// one_set_text of each validation set's scores ("set5/psnr": "set5: PSNR 31.2 dB ..."), or of
/// the scores themselves when they are of one set.
std::string scores_text(const epoch_scores& scores) {
  std::map<std::string, epoch_scores> sets;  // "" for scores without a set
  for (const auto& [name, value] : scores) {
    const auto slash = name.rfind('/');
    if (slash == std::string::npos)
      sets[""][name] = value;
    else
      sets[name.substr(0, slash)][name.substr(slash + 1)] = value;
  }
  std::vector<std::string> parts;
  for (const auto& [set, set_scores] : sets)
    parts.push_back((set.empty() ? "" : set + ": ") + one_set_text(set_scores));
  return hookforge::join_names(parts, "; ");
}

}  // namespace

std::string closing_line(const fit_result& r, double seconds) {
  const bool validated = !r.val_scores.empty();
  const std::string why = r.stop_reason == "epochs" ? "all planned" : "stopped: " + r.stop_reason;
  const std::string text = scores_text(validated ? r.val_scores : r.train_scores);
  return fmt::format("final: {}{} | {} epoch{} ({}), {:.1f} s", validated ? "val" : "train",
                     text.empty() ? "" : " " + text, r.completed_epochs,
                     r.completed_epochs == 1 ? "" : "s", why, seconds);
}

std::string test_line(const epoch_scores& scores, const std::string& checkpoint) {
  return fmt::format("test: {} | {}", scores_text(scores), checkpoint);
}

std::string stopped_line(int signal, const fit_result& result,
                         const std::filesystem::path& checkpoint_dir) {
  std::string saved = "no checkpoint was written: a new run starts over";
  try {
    if (auto last = latest_checkpoint(checkpoint_dir))
      saved = fmt::format("--resume continues from {}", last->string());
  } catch (const std::exception& e) {
    saved = e.what();
  }
  const std::string where = result.mid_epoch
                                ? fmt::format("in epoch {} after step {}",
                                              result.completed_epochs + 1, result.global_step)
                                : fmt::format("after epoch {}", result.completed_epochs);
  return fmt::format("hookforge-run: stopped by {} {}; {}", signal_name(signal), where, saved);
}

}  // namespace hookforge::run::detail
