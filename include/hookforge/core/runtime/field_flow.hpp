// hookforge/core/runtime/field_flow.hpp — a phase's batch fields followed point by point, at
// run time: the rule the Trainer's check before training (torch/runners/trainer_fields.hpp)
// and hookforge-run's config check (run/field_flow.hpp) share.
//
//   hookforge::batch_flow flow(hookforge::batch_stages_of<Runner>,
//                              {.loaded = dataset_fields, .added = model_fields},
//                              runner.hooks().field_uses());
//   flow.at("on_post_step");               // the fields there (nullopt: not known)
//   flow.verdict("lr", "on_post_step");    // found, missing or unverified
//
// The batch at a point (its stage: core/batch_stages.hpp):
//   loaded  the data's fields, and what handlers bound at loaded points write;
//   output  the data's fields, the model's, what the runner adds at that point, and what any
//           handler bound where there is a batch writes.
// A handler's writes count wherever it is bound in the phase, as the static check's rule
// counts an earlier point's: the order of the handlers within a stage is not followed.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/fields.hpp"
#include "hookforge/core/runtime/closest_names.hpp"

namespace hookforge {

/// What a phase's data says of its batch (nullopt: that part does not say).
struct phase_data {
  std::optional<std::vector<std::string>> loaded;  ///< the dataset's fields
  std::optional<std::vector<std::string>> added;   ///< the model's output fields
};

/// Whether a field read at a point is there.
enum class field_verdict {
  found,
  missing,    ///< the batch there is known and lacks it
  unverified  ///< the data or the model does not say its fields
};

class batch_flow {
 public:
  batch_flow(std::span<const point_batch> stages, phase_data data,
             std::span<const bound_fields> handlers)
      : stages_(stages.begin(), stages.end()), data_(std::move(data)) {
    for (const auto& h : handlers) {
      const auto s = stage_at(h.point);
      for (auto name : h.writes) {
        if (s == batch_stage::loaded) early_.emplace_back(name);
        if (s != batch_stage::none) late_.emplace_back(name);
      }
    }
  }

  /// The stage of `point` (none for a point the runner does not list).
  batch_stage stage_at(std::string_view point) const {
    for (const auto& s : stages_)
      if (s.point == point) return s.stage;
    return batch_stage::none;
  }

  /// The fields at stage `s`, beyond what the runner adds at a point; nullopt where the
  /// data does not say them (or for `none`).
  std::optional<std::vector<std::string>> at_stage(batch_stage s) const {
    if (s == batch_stage::none || !data_.loaded) return std::nullopt;
    std::vector<std::string> out = *data_.loaded;
    if (s == batch_stage::loaded) return append(out, early_);
    if (!data_.added) return std::nullopt;
    append(out, *data_.added);
    return append(out, late_);
  }

  /// The fields at `point` (nullopt: not known, or the point carries no batch).
  std::optional<std::vector<std::string>> at(std::string_view point) const {
    auto out = at_stage(stage_at(point));
    if (out)
      for (const auto& s : stages_)
        if (s.point == point)
          for (auto name : s.adds)
            if (!has(*out, name)) out->emplace_back(name);
    return out;
  }

  /// Is `field` there where `present` (from at() or at_stage()) is what is known? A field
  /// the data has from the start is found even where the model's fields are not said.
  field_verdict verdict(std::string_view field,
                        const std::optional<std::vector<std::string>>& present) const {
    if (present) return has(*present, field) ? field_verdict::found : field_verdict::missing;
    if (data_.loaded && has(*data_.loaded, field)) return field_verdict::found;
    return field_verdict::unverified;
  }

  const phase_data& data() const { return data_; }

 private:
  static bool has(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  static std::vector<std::string>& append(std::vector<std::string>& out,
                                          const std::vector<std::string>& more) {
    for (const auto& name : more)
      if (!has(out, name)) out.push_back(name);
    return out;
  }

  std::vector<point_batch> stages_;
  phase_data data_;
  std::vector<std::string> early_, late_;  // written before the forward; written at all
};

/// The fields of `present` that `name` may be a misspelling of: the nearest by edit distance,
/// where that distance is at most half the longer name ('bicubc': bicubic, 'tgt': target; for
/// 'lr' among input and target, none).
inline std::vector<std::string_view> closest_fields(std::string_view name,
                                                    const std::vector<std::string>& present) {
  const std::vector<std::string_view> candidates(present.begin(), present.end());
  auto [closest, distance] = closest_names(name, candidates);
  std::erase_if(closest, [&, d = distance](std::string_view c) {
    return 2 * d > std::max(name.size(), c.size());
  });
  return closest;
}

/// A handler's read that its point's batch lacks.
struct missing_field {
  const bound_fields* handler;
  std::string field;
  std::vector<std::string> present;  ///< the fields there
};

/// The first read of `handlers` that `flow` says is missing (handlers in their order, each's
/// reads as written); nullopt when every read is found or cannot be verified.
inline std::optional<missing_field> first_missing_field(const batch_flow& flow,
                                                        std::span<const bound_fields> handlers) {
  for (const auto& h : handlers) {
    const auto present = flow.at(h.point);
    for (auto name : h.reads)
      if (flow.verdict(name, present) == field_verdict::missing)
        return missing_field{&h, std::string(name), *present};
  }
  return std::nullopt;
}

}  // namespace hookforge
