// hookforge/run/field_flow.hpp — a run's batch fields followed from the data through the model
// to the loss, the metrics and the hooks, once the run is built and before it trains: a field
// read that nothing provides is a config_error at the key that names it, not a failure an
// epoch later.
//
//   run::field_report r = run::check_batch_fields(builder, trainer_params, phases);
//
// Who says what:
//   - a dataset, the fields of its samples (Dataset::fields, from the class's field_names());
//   - a model, the fields its forward adds (Model::output_fields: "output" for a Tensor);
//   - an option that names a field, where its class is registered, by the stage it is read at:
//       cfg::field("output_field", &PSNR::output_field).naming(run::batch_field)
//     loaded_field            read before the model runs (a model's input_field, EdgeEnhancedInput)
//     batch_field             read once the model's output is merged in (losses, metrics, hooks)
//     validation_batch_field  the same, read in validation only (TensorBoardLogger's images)
//     d_loss_field, g_loss_field  read by a GAN runner's D (G) loss, after on_post_d_forward
//                             (on_post_g_forward), where the runner has added what it adds
//     A default the config leaves out counts as written at its entry;
//   - a hook class, the fields each handler reads and writes (core/fields.hpp), noted by the
//     config layer with the points the handler is bound to (config/hooks.hpp);
//   - the phase's runner, what its batch holds at each point (its batch_stages,
//     core/batch_stages.hpp): as loaded, or with the model's output and what the runner adds.
// The batch at a point follows core/runtime/field_flow.hpp's rule, the one the Trainer's own
// check before training follows.
//
// A value belongs to the phases whose components reach it in the config (training:
// the trainer's train_loader, training_runner, model and loss; validation: val_loader,
// validation_runner, model and val_loss or loss), following ${ref:...}; a hook shared by both
// runners is checked in each. Where a dataset or a model does not say its fields, what reads
// them is listed as not verified rather than guessed. A field the model adds that nothing of
// the phase reads is a warning (strict: a config_error at the trainer's model).
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/hooks.hpp"
#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/runtime/field_flow.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/run/model.hpp"

namespace hookforge::run {

/// What an option marked `.naming(...)` names: a field of the batch, by when it is read.
inline constexpr std::string_view loaded_field = "a field of the batch as loaded";
inline constexpr std::string_view batch_field = "a field of the batch";
inline constexpr std::string_view validation_batch_field = "a field of the validation batch";
/// Read by a GAN runner's losses: D's after on_post_d_forward, G's after on_post_g_forward.
inline constexpr std::string_view d_loss_field = "a field of the batch D's loss reads";
inline constexpr std::string_view g_loss_field = "a field of the batch G's loss reads";

/// One phase's batch: what its dataset gives and what the model adds (nullopt: not said).
struct phase_fields {
  std::string name;  ///< "training", "validation"
  std::optional<std::vector<std::string>> loaded;
  std::optional<std::vector<std::string>> added;
  /// The fields at each of the runner's points that carry a batch, where they are known.
  std::vector<std::pair<std::string, std::vector<std::string>>> at_points{};
};

/// What check_batch_fields found, for hookforge-run --check.
struct field_report {
  std::vector<phase_fields> phases;
  std::size_t checked = 0;              ///< field names read and found
  std::vector<std::string> unverified;  ///< "key: 'name' (why)"
  std::string format() const;
};

namespace detail {

/// The keys of every value reachable from `v`, following ${ref:...} (cycles stop).
inline void reach(const config::document& doc, const config::value& v, std::set<std::string>& keys,
                  std::set<std::string>& paths) {
  if (!paths.insert(v.path()).second) return;
  keys.insert(v.key());
  config::value r = doc.resolve(v);
  if (const auto target = r.reference(); !target.empty()) {
    reach(doc, doc.at(target, &r), keys, paths);
  } else if (r.is_map()) {
    for (const auto& name : r.keys()) reach(doc, *r.find(name), keys, paths);
  } else if (r.is_sequence()) {
    for (const auto& e : r.elements()) reach(doc, e, keys, paths);
  }
}

/// The value at `path` ("val_loaders.set5": key by key, following ${ref:...}) under `v`.
inline std::optional<config::value> find_path(const config::document& doc, const config::value& v,
                                              std::string_view path) {
  std::optional<config::value> at = v;
  for (std::size_t start = 0; at && start <= path.size();) {
    const auto dot = std::min(path.find('.', start), path.size());
    at = doc.resolve(*at).find(path.substr(start, dot - start));
    start = dot + 1;
  }
  return at;
}

/// The keys a phase's components reach from the trainer's `params` (see the top).
inline std::set<std::string> phase_keys(const config::document& doc, const config::value& params,
                                        const std::vector<std::string_view>& roots) {
  std::set<std::string> keys, paths;
  for (auto root : roots)
    if (auto v = find_path(doc, params, root)) reach(doc, *v, keys, paths);
  return keys;
}

/// Whether `r` lies in `keys`: its own key, or for a default its entry's.
inline bool reached(const std::set<std::string>& keys, const config::named_reference& r) {
  if (keys.contains(r.key)) return true;
  const auto params = r.key.rfind(".params.");
  return !r.written && params != std::string::npos && keys.contains(r.key.substr(0, params));
}

/// A hook's reference (a field its handler reads or writes) as the flow rule sees it: one
/// per point it is bound to.
inline std::vector<bound_fields> handler_uses(
    const std::vector<const config::named_reference*>& refs) {
  std::vector<bound_fields> out;
  for (const auto* r : refs) {
    const bool reads = r->what == config::handler_reads_field;
    if (!reads && r->what != config::handler_writes_field) continue;
    for (const auto& p : r->points) {
      out.push_back({p, r->reader, {}, {}, {}});
      (reads ? out.back().reads : out.back().writes).push_back(r->name);
    }
  }
  return out;
}

/// Where reference `r` reads its field in phase `phase`: (the fields there, point; "" for an
/// option, read at a stage). A point without a batch is left out.
inline std::vector<std::pair<std::optional<std::vector<std::string>>, std::string>> reads_of(
    const config::named_reference& r, std::string_view phase, const batch_flow& flow) {
  if (r.what == loaded_field) return {{flow.at_stage(batch_stage::loaded), ""}};
  if (r.what == batch_field || (r.what == validation_batch_field && phase == "validation"))
    return {{flow.at_stage(batch_stage::output), ""}};
  std::vector<std::pair<std::optional<std::vector<std::string>>, std::string>> out;
  if (r.what == d_loss_field || r.what == g_loss_field) {
    const std::string point = r.what == d_loss_field ? "on_post_d_forward" : "on_post_g_forward";
    if (flow.stage_at(point) != batch_stage::none) out.emplace_back(flow.at(point), point);
  }
  if (r.what == config::handler_reads_field)
    for (const auto& p : r.points)
      if (flow.stage_at(p) != batch_stage::none) out.emplace_back(flow.at(p), p);
  return out;
}

/// The config_error for `r`, which reads at `point` a field `present` lacks.
inline config::config_error missing_field_error(const config::named_reference& r,
                                                std::string_view batch, std::string_view point,
                                                const std::vector<std::string>& present) {
  const auto closest = closest_fields(r.name, present);
  const auto got = !r.reader.empty() ? fmt::format("'{}', which {} reads", r.name, r.reader)
                   : r.written       ? fmt::format("'{}'", r.name)
                               : fmt::format("'{}' (its default: the entry leaves it out)", r.name);
  return config::config_error(
      r.where, r.key,
      fmt::format("a field the {} batch has {} ({})", batch,
                  point.empty() ? std::string("at this point") : fmt::format("at {}", point),
                  present.empty() ? std::string("none") : hookforge::join_names(present, ", ")),
      got, closest.empty() ? std::string() : "closest: " + hookforge::join_names(closest, ", "));
}

}  // namespace detail

/// The inputs of one phase: its name, the trainer params it starts from, its dataset and model,
/// and its runner: its name and what its batch holds where (core/batch_stages.hpp).
struct phase_inputs {
  std::string name;
  std::vector<std::string_view> roots;  ///< keys under the trainer's params ("val_loaders.set5")
  const Dataset* data = nullptr;        ///< null: the phase does not run
  const Model* model = nullptr;
  std::string_view runner{};
  std::span<const point_batch> stages{};  ///< empty: the runner does not say
};

namespace detail {

/// Why a read in `f`'s phase could not be verified.
inline std::string unverified_why(const phase_fields& f, const phase_inputs& phase,
                                  const config::named_reference& r) {
  if (phase.stages.empty() && !r.points.empty())
    return fmt::format("{} does not say what its batch holds where", phase.runner);
  return fmt::format("{} does not say its fields",
                     f.loaded ? "the model" : fmt::format("the {} dataset", f.name));
}

/// Checks one phase's references (see check_batch_fields); returns the names they read.
inline std::set<std::string> check_phase(const phase_fields& f, const phase_inputs& phase,
                                         const batch_flow& flow,
                                         const std::vector<const config::named_reference*>& refs,
                                         field_report& report) {
  std::set<std::string> read;
  for (const auto* r : refs) {
    const auto reads = reads_of(*r, f.name, flow);
    if (reads.empty() && phase.stages.empty() && r->what == config::handler_reads_field)
      report.unverified.push_back(
          fmt::format("{}: '{}' ({})", r->key, r->name, unverified_why(f, phase, *r)));
    for (const auto& [present, point] : reads) {
      read.insert(r->name);
      switch (flow.verdict(r->name, present)) {
        case field_verdict::found:
          ++report.checked;
          break;
        case field_verdict::missing:
          throw missing_field_error(*r, f.name, point, *present);
        case field_verdict::unverified:
          report.unverified.push_back(
              fmt::format("{}: '{}' ({})", r->key, r->name, unverified_why(f, phase, *r)));
      }
    }
  }
  return read;
}

}  // namespace detail

/// Checks every field-naming value of `b` against the phases (see the top of this file).
/// Throws config::config_error for a field read that its phase's batch lacks, and (strict) for
/// a model output nothing reads; warns of the latter otherwise.
inline field_report check_batch_fields(const config::builder& b, const config::value& params,
                                       const std::vector<phase_inputs>& phases) {
  field_report report;
  for (const auto& phase : phases) {
    if (!phase.data) continue;
    phase_fields f{phase.name, phase.data->fields(),
                   phase.model ? phase.model->output_fields() : std::nullopt};
    const auto keys = detail::phase_keys(b.doc(), params, phase.roots);
    std::vector<const config::named_reference*> refs;
    for (const auto& r : b.named_references())
      if (detail::reached(keys, r)) refs.push_back(&r);
    const auto handlers = detail::handler_uses(refs);
    const batch_flow flow(phase.stages, {f.loaded, f.added}, handlers);
    const auto read = detail::check_phase(f, phase, flow, refs, report);
    for (const auto& s : phase.stages)
      if (auto at = flow.at(s.point)) f.at_points.emplace_back(s.point, std::move(*at));
    if (f.added)
      for (const auto& out : *f.added)
        if (!read.contains(out)) {
          if (b.options().strict) {
            const auto at = params.find("model");
            throw config::config_error(
                at ? at->where() : config::location{}, "trainer.params.model",
                "a model each of whose outputs the run reads (--strict)",
                fmt::format("its output '{}', which nothing in {} reads", out, phase.name));
          }
          hookforge::warn(fmt::format(
              "the model's output '{}' is read by nothing in {} that says what it reads", out,
              phase.name));
        }
    report.phases.push_back(std::move(f));
  }
  return report;
}

inline std::string field_report::format() const {
  auto names = [](const std::optional<std::vector<std::string>>& n) {
    return n ? (n->empty() ? std::string("none") : hookforge::join_names(*n, ", "))
             : std::string("not said");
  };
  std::string out = "batch fields:\n";
  for (const auto& p : phases) {
    out += fmt::format("  {:<11} {} + the model's {}\n", p.name + ":", names(p.loaded),
                       names(p.added));
    for (const auto& [point, fields] : p.at_points)
      out += fmt::format("    {:<26} {}\n", point, hookforge::join_names(fields, ", "));
  }
  out += fmt::format("  {} field name{} read and found", checked, checked == 1 ? "" : "s");
  if (unverified.empty()) return out + "; not verified: none\n";
  out += fmt::format("; not verified: {}\n", unverified.size());
  for (const auto& u : unverified) out += "    " + u + "\n";
  return out;
}

}  // namespace hookforge::run
