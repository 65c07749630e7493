// hookforge/hooks/model_summary.hpp — ModelSummary: the model's modules, their parameters and
// size, printed as training begins (Lightning's ModelSummary callback).
//
//   hookforge::Trainer trainer(model, train, val, options, hookforge::ModelSummary{});
//   hookforge::ModelSummary{{.max_depth = 2}}   // two levels of submodules; -1: every level
//
//     | Name       | Type       | Params | Trainable | Mode  | Size (MB)
//   -------------------------------------------------------------------
//   0 | body       | Sequential | 4.3 K  | 4.3 K     | train | 0.017
//   -------------------------------------------------------------------
//   4.3 K     Trainable params
//   0         Non-trainable params
//   4.3 K     Total params
//   0.017     Total params size (MB)
//
// The rows are the model's submodules down to max_depth, by their dotted names as in a state
// dict (a GAN's under "generator." and "discriminator."); each counts its parameters with its
// submodules'. Counts read as Lightning's (1.7 K, 2.1 M); sizes are in MB (10^6 bytes) of the
// parameters as stored, by their dtypes (Lightning estimates 4 bytes each). max_depth 0 prints
// the totals only. A model that is a plain callable has no modules: the hook says so.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/nn/module.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge {

struct model_summary_options {
  std::int64_t max_depth = 1;  ///< levels of submodules listed; -1 every level, 0 none
  std::FILE* out = stdout;     ///< where the table goes
};

namespace detail::summary {

/// A count as Lightning shows it: 66, 1.7 K, 57.3 K, 2.1 M, 1.0 B.
inline std::string readable_count(std::int64_t n) {
  if (n < 1000) return std::to_string(n);
  static constexpr std::string_view units[] = {"K", "M", "B", "T"};
  double value = static_cast<double>(n);
  std::size_t unit = 0;
  for (value /= 1000; value >= 1000 && unit + 1 < std::size(units); ++unit) value /= 1000;
  return fmt::format("{:.1f} {}", value, units[unit]);
}

/// The class a module is: "torch::nn::Conv2dImpl" reads "Conv2d", "ESPCNImpl" "ESPCN".
inline std::string type_of(const torch::nn::Module& m) {
  std::string name = m.name();
  if (const auto colon = name.rfind("::"); colon != std::string::npos) name.erase(0, colon + 2);
  if (name.size() > 4 && name.ends_with("Impl")) name.resize(name.size() - 4);
  return name;
}

/// One module's figures, its submodules' included.
struct row {
  std::string name, type;
  std::int64_t params = 0, trainable = 0, bytes = 0;
  bool training = true;
};

inline row row_of(std::string name, const torch::nn::Module& m) {
  row r{std::move(name), type_of(m)};
  r.training = m.is_training();
  for (const auto& p : m.parameters(/*recurse=*/true)) {
    r.params += p.numel();
    if (p.requires_grad()) r.trainable += p.numel();
    r.bytes += p.numel() * static_cast<std::int64_t>(p.element_size());
  }
  return r;
}

inline std::string megabytes(std::int64_t bytes) {
  return fmt::format("{:.3f}", static_cast<double>(bytes) / 1e6);
}

}  // namespace detail::summary

class ModelSummary {
 public:
  explicit ModelSummary(model_summary_options options = {}) : options_(options) {}

  void summarize(TrainerContext& ctx) {
    const std::string text = format(ctx.model_modules(), options_.max_depth);
    std::fputs(text.c_str(), options_.out);
    std::fflush(options_.out);
  }

  /// The table for `modules` (each under its section), down to `max_depth`.
  static std::string format(const std::vector<std::pair<std::string, torch::nn::Module*>>& modules,
                            std::int64_t max_depth) {
    namespace s = detail::summary;
    if (modules.empty())
      return "ModelSummary: the model is a callable without a torch::nn::Module; nothing to "
             "summarise\n";
    std::vector<s::row> rows, totals;
    for (const auto& [section, module] : modules) {
      totals.push_back(s::row_of(section, *module));
      // A GAN's modules are named by their section; a single model's are not.
      const std::string prefix = modules.size() > 1 ? section + "." : "";
      if (modules.size() > 1 && max_depth != 0) rows.push_back(totals.back());
      for (const auto& item : module->named_children())
        add_rows(rows, prefix + item.key(), *item.value(), 1, max_depth);
    }
    return table(rows, totals);
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(summarize, points::on_training_began));

 private:
  static void add_rows(std::vector<detail::summary::row>& rows, const std::string& name,
                       const torch::nn::Module& m, std::int64_t depth, std::int64_t max_depth) {
    if (max_depth >= 0 && depth > max_depth) return;
    rows.push_back(detail::summary::row_of(name, m));
    for (const auto& item : m.named_children())
      add_rows(rows, name + "." + item.key(), *item.value(), depth + 1, max_depth);
  }

  static std::string table(const std::vector<detail::summary::row>& rows,
                           const std::vector<detail::summary::row>& totals) {
    namespace s = detail::summary;
    std::size_t index_w = std::to_string(rows.size()).size(), name_w = 4, type_w = 4;
    for (const auto& r : rows) {
      name_w = std::max(name_w, r.name.size());
      type_w = std::max(type_w, r.type.size());
    }
    std::string out;
    const auto line = [&](std::string_view index, std::string_view name, std::string_view type,
                          std::string_view params, std::string_view trainable,
                          std::string_view mode, std::string_view size) {
      out += fmt::format("{:<{}} | {:<{}} | {:<{}} | {:<6} | {:<9} | {:<5} | {}\n", index, index_w,
                         name, name_w, type, type_w, params, trainable, mode, size);
    };
    line("", "Name", "Type", "Params", "Trainable", "Mode", "Size (MB)");
    const std::string rule(index_w + name_w + type_w + 47, '-');
    out += rule + "\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      line(std::to_string(i), r.name, r.type, s::readable_count(r.params),
           s::readable_count(r.trainable), r.training ? "train" : "eval", s::megabytes(r.bytes));
    }
    if (!rows.empty()) out += rule + "\n";
    std::int64_t params = 0, trainable = 0, bytes = 0;
    for (const auto& t : totals) {
      params += t.params;
      trainable += t.trainable;
      bytes += t.bytes;
    }
    out += fmt::format("{:<9} Trainable params\n", s::readable_count(trainable));
    out += fmt::format("{:<9} Non-trainable params\n", s::readable_count(params - trainable));
    out += fmt::format("{:<9} Total params\n", s::readable_count(params));
    out += fmt::format("{:<9} Total params size (MB)\n", s::megabytes(bytes));
    return out;
  }

  model_summary_options options_;
};

}  // namespace hookforge
