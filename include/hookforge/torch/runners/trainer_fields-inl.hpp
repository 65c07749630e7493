// hookforge/torch/runners/trainer_fields-inl.hpp — the field check's rule and its message, which
// depend on none of the Trainer's template arguments: included by trainer_fields.hpp header-only,
// compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "hookforge/core/runtime/field_flow.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/runners/trainer_fields.hpp"

namespace hookforge::detail {

/// The message for `miss`, a read of a hook on `runner` that the `phase` batch lacks.
inline std::string missing_field_text(const missing_field& miss, std::string_view runner,
                                      std::string_view phase) {
  const auto& h = *miss.handler;
  const auto closest = closest_fields(miss.field, miss.present);
  std::string out = "Trainer: " + h.hook + "::" + h.method + " reads the batch field '" +
                    miss.field + "' at " + std::string(h.point) + " of " + std::string(runner) +
                    ", which the " + std::string(phase) + " batch does not have there (fields: " +
                    (miss.present.empty() ? std::string("none") : join_names(miss.present, ", ")) +
                    ")";
  if (!closest.empty()) out += "; closest: " + join_names(closest, ", ");
  return out +
         ". Provide it (the dataset, the model or an earlier hook's writes<>) or bind the "
         "handler later";
}

HOOKFORGE_INLINE void check_field_reads(std::string_view phase, std::string_view runner,
                                        std::span<const point_batch> stages, phase_data data,
                                        std::span<const bound_fields> uses) {
  const batch_flow flow(stages, std::move(data), uses);
  if (const auto miss = first_missing_field(flow, uses))
    throw std::invalid_argument(missing_field_text(*miss, runner, phase));
}

}  // namespace hookforge::detail
