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
//     A default the config leaves out counts as written at its entry;
//   - a hook class, the fields each handler reads and writes (core/fields.hpp), noted by the
//     config layer with the points the handler is bound to (config/hooks.hpp): at on_pre_step
//     the batch is as loaded (plus what hooks wrote there), at the post-forward points it
//     holds the model's output (plus what any hook of the phase writes), and epoch and trainer
//     points have no batch.
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
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/hooks.hpp"
#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/run/model.hpp"

namespace hookforge::run {

/// What an option marked `.naming(...)` names: a field of the batch, by when it is read.
inline constexpr std::string_view loaded_field = "a field of the batch as loaded";
inline constexpr std::string_view batch_field = "a field of the batch";
inline constexpr std::string_view validation_batch_field = "a field of the validation batch";

/// One phase's batch: what its dataset gives and what the model adds (nullopt: not said).
struct phase_fields {
  std::string name;  ///< "training", "validation"
  std::optional<std::vector<std::string>> loaded;
  std::optional<std::vector<std::string>> added;
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

inline bool has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// When a point's batch is at hand: before the model's forward (its fields as loaded), after
/// it (the model's output merged in), or not at all (epoch and trainer points).
enum class batch_stage { none, loaded, output };
inline batch_stage stage_at(std::string_view point) {
  if (point == "on_pre_step" || point == "on_pre_g_forward") return batch_stage::loaded;
  for (std::string_view p :
       {"on_post_forward", "on_post_backward", "on_post_step", "on_pre_d_forward",
        "on_post_d_forward", "on_post_d_backward", "on_post_g_forward", "on_post_g_backward"})
    if (point == p) return batch_stage::output;
  return batch_stage::none;
}

/// Where reference `r` reads its field in phase `phase`: (stage, point; "" for an option).
inline std::vector<std::pair<batch_stage, std::string>> reads_of(const config::named_reference& r,
                                                                 std::string_view phase) {
  if (r.what == loaded_field) return {{batch_stage::loaded, ""}};
  if (r.what == batch_field || (r.what == validation_batch_field && phase == "validation"))
    return {{batch_stage::output, ""}};
  std::vector<std::pair<batch_stage, std::string>> out;
  if (r.what == config::handler_reads_field)
    for (const auto& p : r.points)
      if (auto s = stage_at(p); s != batch_stage::none) out.emplace_back(s, p);
  return out;
}

/// The config_error for `r`, which reads at `point` a field `present` lacks.
inline config::config_error missing_field(const config::named_reference& r, std::string_view batch,
                                          std::string_view point,
                                          const std::vector<std::string>& present) {
  const std::vector<std::string_view> candidates(present.begin(), present.end());
  const auto closest = hookforge::closest_names(r.name, candidates).first;
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

/// A phase's batch at each stage, as far as its parts say (nullopt: not said).
struct stage_fields {
  std::optional<std::vector<std::string>> loaded, output;
};

/// The fields of `f` at each stage, with what the phase's hooks write (`refs` reached).
inline stage_fields fields_by_stage(const phase_fields& f,
                                    const std::vector<const config::named_reference*>& refs) {
  std::vector<std::string> early, late;  // written before the forward; written at all
  for (const auto* r : refs)
    if (r->what == config::handler_writes_field)
      for (const auto& p : r->points) {
        const auto s = stage_at(p);
        if (s == batch_stage::loaded) early.push_back(r->name);
        if (s != batch_stage::none) late.push_back(r->name);
      }
  stage_fields out;
  if (f.loaded) {
    out.loaded = *f.loaded;
    out.loaded->insert(out.loaded->end(), early.begin(), early.end());
    if (f.added) {
      out.output = *f.loaded;
      out.output->insert(out.output->end(), f.added->begin(), f.added->end());
      out.output->insert(out.output->end(), late.begin(), late.end());
    }
  }
  return out;
}

}  // namespace detail

/// The inputs of one phase: its name, the trainer params it starts from, its dataset and model.
struct phase_inputs {
  std::string name;
  std::vector<std::string_view> roots;  ///< keys under the trainer's params ("val_loaders.set5")
  const Dataset* data = nullptr;        ///< null: the phase does not run
  const Model* model = nullptr;
};

namespace detail {

/// Checks one phase's references (see check_batch_fields); returns the names they read.
inline std::set<std::string> check_phase(const phase_fields& f,
                                         const std::vector<const config::named_reference*>& refs,
                                         field_report& report) {
  const auto present = fields_by_stage(f, refs);
  std::set<std::string> read;
  for (const auto* r : refs)
    for (const auto& [stage, point] : reads_of(*r, f.name)) {
      read.insert(r->name);
      const auto& have = stage == batch_stage::loaded ? present.loaded : present.output;
      if (have && has(*have, r->name)) {
        ++report.checked;
      } else if (have) {
        throw missing_field(*r, f.name, point, *have);
      } else if (present.loaded && has(*present.loaded, r->name)) {
        ++report.checked;  // there from the start, whatever the model adds
      } else {
        report.unverified.push_back(
            fmt::format("{}: '{}' ({} does not say its fields)", r->key, r->name,
                        f.loaded ? "the model" : fmt::format("the {} dataset", f.name)));
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
    const auto read = detail::check_phase(f, refs, report);
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
  for (const auto& p : phases)
    out += fmt::format("  {:<11} {} + the model's {}\n", p.name + ":", names(p.loaded),
                       names(p.added));
  out += fmt::format("  {} field name{} read and found", checked, checked == 1 ? "" : "s");
  if (unverified.empty()) return out + "; not verified: none\n";
  out += fmt::format("; not verified: {}\n", unverified.size());
  for (const auto& u : unverified) out += "    " + u + "\n";
  return out;
}

}  // namespace hookforge::run
