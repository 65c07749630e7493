// hookforge/torch/metrics/metric_rule.hpp — whether a score is better greater or less, and
// how a score's name is read, written once for everything that compares or groups scores:
// CheckpointSaver's save_best, EarlyStopping, ReduceLROnPlateau (its mode min/max is a rule),
// MetricsPlot's panels and hookforge-run's closing line.
//
//   auto rule = hookforge::metric_rule_for("CheckpointSaver", "psnr", "");  // greater, inferred
//   hookforge::is_better(rule, 31.2, 30.9)                                  // true
//   hookforge::metric_has_word("val_bicubic_psnr", "psnr")                  // true
//
// Inference reads the name's words (split at anything not a letter or digit, lower
// case; a word may end in digits: "top1", "map50"): psnr, ssim, acc…, precision, recall,
// f1, auc, map, top, iou, miou, dice mean greater is better; loss, error, err, mae, mse,
// rmse, lpips, fid, nll mean less is better. A name with a word of each kind is a cost
// ("psnr_loss", "top1_error"): less. A name with neither is an error asking for `rule`.
// Unlike MMEngine, which matches substrings ("heatmap_loss" holds "map"), only whole
// words count.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace hookforge {

/// Which way a score improves.
enum class metric_rule { greater, less };

constexpr std::string_view to_string(metric_rule rule) {
  return rule == metric_rule::greater ? "greater" : "less";
}

/// The words of a score's name, lower case: "val_PSNR_y" -> val, psnr, y.
inline std::vector<std::string> metric_words(std::string_view name);

/// `name` holds `word` as a whole word (ignoring case): "val_loss" holds "loss", "closs" not.
inline bool metric_has_word(std::string_view name, std::string_view word);

namespace detail::rule {

inline constexpr std::array<std::string_view, 13> greater_words = {
    "psnr", "ssim", "acc", "precision", "recall", "f1",      "auc",
    "map",  "top",  "iou", "miou",      "dice",   "accuracy"};
inline constexpr std::array<std::string_view, 9> less_words = {"loss", "error", "err", "mae", "mse",
                                                               "rmse", "lpips", "fid", "nll"};

inline std::vector<std::string> words(std::string_view name) {
  std::vector<std::string> out;
  std::string word;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

/// `word` is `key`, possibly followed by digits ("top5"); "acc" also starts "accuracy".
inline bool matches(std::string_view word, std::string_view key) {
  if (!word.starts_with(key)) return false;
  auto rest = word.substr(key.size());
  return std::all_of(rest.begin(), rest.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

template <std::size_t N>
bool has_word(const std::vector<std::string>& words, const std::array<std::string_view, N>& keys) {
  for (const auto& w : words)
    for (auto k : keys)
      if (matches(w, k)) return true;
  return false;
}

}  // namespace detail::rule

inline std::vector<std::string> metric_words(std::string_view name) {
  return detail::rule::words(name);
}

inline bool metric_has_word(std::string_view name, std::string_view word) {
  const auto words = metric_words(name);
  const auto key = metric_words(word);
  return key.size() == 1 && std::find(words.begin(), words.end(), key.front()) != words.end();
}

/// The rule a score's name implies, or nullopt when the name says nothing.
inline std::optional<metric_rule> infer_metric_rule(std::string_view metric) {
  const auto words = detail::rule::words(metric);
  if (detail::rule::has_word(words, detail::rule::less_words)) return metric_rule::less;
  if (detail::rule::has_word(words, detail::rule::greater_words)) return metric_rule::greater;
  return std::nullopt;
}

/// The rule for `metric`: `rule` ("greater" or "less") when given, else inferred from the
/// name. Throws std::invalid_argument naming `hook` for an unknown rule or a name that
/// implies none.
inline metric_rule metric_rule_for(std::string_view hook, std::string_view metric,
                                   std::string_view rule) {
  if (rule == "greater") return metric_rule::greater;
  if (rule == "less") return metric_rule::less;
  if (!rule.empty())
    throw std::invalid_argument(
        fmt::format("{}: rule must be \"greater\", \"less\" or empty (inferred from the metric's "
                    "name), got \"{}\"",
                    hook, rule));
  if (auto inferred = infer_metric_rule(metric)) return *inferred;
  throw std::invalid_argument(fmt::format(
      "{}: cannot tell whether a greater or a smaller '{}' is better; set rule to \"greater\" "
      "or \"less\"",
      hook, metric));
}

/// Checks a rule given as text ("", "greater", "less") without a metric to infer from yet.
inline void check_rule_text(std::string_view hook, std::string_view rule) {
  if (!rule.empty() && rule != "greater" && rule != "less")
    (void)metric_rule_for(hook, "", rule);  // throws the message above
}

/// `candidate` improves on `reference` by more than `min_delta` (>= 0) under `rule`, in
/// Lightning's EarlyStopping min_delta form: candidate + min_delta < reference (less),
/// candidate - min_delta > reference (greater); see is_better_absolute for PyTorch's.
/// NaN improves on nothing (MMEngine's comparisons let a NaN become the best score);
/// any other score improves on a NaN reference.
inline bool is_better(metric_rule rule, double candidate, double reference, double min_delta = 0) {
  if (std::isnan(candidate)) return false;
  if (std::isnan(reference)) return true;
  return rule == metric_rule::greater ? candidate - min_delta > reference
                                      : candidate + min_delta < reference;
}

/// `candidate` improves on `reference` by more than `threshold` (>= 0) under `rule`, in
/// PyTorch's ReduceLROnPlateau "abs" form: candidate < reference - threshold (less),
/// candidate > reference + threshold (greater). NaN as in is_better.
// Two forms: is_better follows Lightning (EarlyStopping), this PyTorch: they differ at boundaries.
inline bool is_better_absolute(metric_rule rule, double candidate, double reference,
                               double threshold) {
  if (std::isnan(candidate)) return false;
  if (std::isnan(reference)) return true;
  return rule == metric_rule::greater ? candidate > reference + threshold
                                      : candidate < reference - threshold;
}

/// `candidate` improves on `reference` by more than the fraction `threshold` (>= 0) of it
/// under `rule`: beyond reference * (1 - threshold) (less) or reference * (1 + threshold)
/// (greater), PyTorch's ReduceLROnPlateau "rel" mode exactly (its threshold + 1 is the same
/// double: IEEE addition commutes).
/// NaN as in is_better.
inline bool is_better_relative(metric_rule rule, double candidate, double reference,
                               double threshold) {
  if (std::isnan(candidate)) return false;
  if (std::isnan(reference)) return true;
  return rule == metric_rule::greater ? candidate > reference * (1.0 + threshold)
                                      : candidate < reference * (1.0 - threshold);
}

/// The start value every score improves on: -inf for greater, +inf for less.
constexpr double worst_score(metric_rule rule) {
  return rule == metric_rule::greater ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity();
}

}  // namespace hookforge
