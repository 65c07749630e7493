// hookforge/hooks/detail/top_k.hpp — CheckpointSaver's k best checkpoints by a score, kept as
// Lightning's ModelCheckpoint keeps its best_k_models:
//
//   - while fewer than k are kept, every score enters (k = -1: every score, none leaves);
//   - then a score enters only when strictly better than the worst kept one, which leaves;
//   - among equal scores, the one kept longest counts as the worst (it leaves first) and as
//     the best (Python's min and max return the first of equals, in insertion order).
//
// Unlike Lightning, which keeps a NaN as the worst possible score while fewer than k are
// kept, a NaN never enters: a checkpoint whose score is NaN is not among the best.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hookforge/torch/metrics/metric_rule.hpp"

namespace hookforge::detail::saver {

class top_k {
 public:
  struct entry {
    std::string file;
    double score;
  };

  /// Whether `score` enters the `k` best (k >= 1, or -1: all) under `rule`.
  bool admits(double score, std::int64_t k, metric_rule rule) const {
    if (std::isnan(score)) return false;
    if (k < 0 || static_cast<std::int64_t>(entries_.size()) < k) return true;
    return is_better(rule, score, entries_[worst(rule)].score);
  }

  /// Keeps `file` with `score` (a file of that name kept already is replaced); returns the
  /// file that left to make room, if one did.
  std::optional<std::string> add(std::string file, double score, std::int64_t k, metric_rule rule) {
    std::erase_if(entries_, [&](const entry& e) { return e.file == file; });
    std::optional<std::string> left;
    if (k > 0 && static_cast<std::int64_t>(entries_.size()) >= k) {
      const auto i = static_cast<std::ptrdiff_t>(worst(rule));
      left = entries_[static_cast<std::size_t>(i)].file;
      entries_.erase(entries_.begin() + i);
    }
    entries_.push_back({std::move(file), score});
    return left;
  }

  /// The best kept (the first kept of equals); nullptr when none is.
  const entry* best(metric_rule rule) const {
    return entries_.empty() ? nullptr : &entries_[first_by(rule, true)];
  }

  bool holds(const std::string& file) const {
    for (const auto& e : entries_)
      if (e.file == file) return true;
    return false;
  }

  void clear() { entries_.clear(); }
  /// In the order they entered.
  const std::vector<entry>& entries() const { return entries_; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.file);
    return out;
  }
  std::vector<double> scores() const {
    std::vector<double> out;
    for (const auto& e : entries_) out.push_back(e.score);
    return out;
  }
  /// From files() and scores() of the same length (a checkpoint's bookkeeping).
  void assign(const std::vector<std::string>& files, const std::vector<double>& scores) {
    entries_.clear();
    for (std::size_t i = 0; i < files.size() && i < scores.size(); ++i)
      entries_.push_back({files[i], scores[i]});
  }

 private:
  std::size_t worst(metric_rule rule) const { return first_by(rule, false); }

  /// The index of the first best (or worst) score.
  std::size_t first_by(metric_rule rule, bool best) const {
    std::size_t found = 0;
    for (std::size_t i = 1; i < entries_.size(); ++i) {
      const double a = entries_[i].score, b = entries_[found].score;
      const bool greater = rule == metric_rule::greater;
      if (best ? (greater ? a > b : a < b) : (greater ? a < b : a > b)) found = i;
    }
    return found;
  }

  std::vector<entry> entries_;
};

}  // namespace hookforge::detail::saver
