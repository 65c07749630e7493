// hookforge/torch/io/pretrained.hpp — a model's starting weights from a file: a fine-tune, a
// teacher, a backbone.
//
//   auto report = hookforge::load_pretrained(*model, {.file = "runs/x/best.pt"});
//   std::cout << report.summary() << "\n";   // "loaded 6 tensors from 'runs/x/best.pt' ..."
//   hookforge::load_pretrained(*student->backbone, {.file = "teacher.pt", .prefix = "backbone."});
//
// The file is a hookforge checkpoint (its module section `section`, "model" for the Trainer's)
// or a torch::save archive of a module (torch::save(module, path)); the kind is told by the
// file. Tensors are matched by their dotted names ("body.0.weight"), parameters and buffers
// alike. With `prefix`, only the stored tensors whose names start with it are taken, the
// prefix removed (MMEngine's Pretrained init: a detector's "backbone." into a backbone).
//
// A shape mismatch is always an error. With `strict` (the default), so is a tensor of the
// model missing from the file and a tensor of the file (under the prefix) the model lacks;
// without, those are left out and listed in the report. The error lists every missing,
// unexpected and mis-shaped name, and nothing is copied unless everything checks: the
// model keeps its weights. Values are copied into the model's tensors (its device and
// dtype). `apply = false` checks and reports without copying (hookforge-run --check).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

struct pretrained_options {
  std::filesystem::path file;     ///< required: a hookforge checkpoint or a torch::save archive
  std::string prefix = {};        ///< take the stored tensors under it, without it
  bool strict = true;             ///< every tensor on both sides must match
  std::string section = "model";  ///< the module section of a hookforge checkpoint
};

/// What load_pretrained found and did.
struct pretrained_report {
  std::filesystem::path file;
  std::string source;                   ///< "hookforge checkpoint, section 'model'", ...
  std::vector<std::string> loaded;      ///< names copied (or, without apply, that would be)
  std::vector<std::string> missing;     ///< the model's names the file lacks (not strict)
  std::vector<std::string> unexpected;  ///< the file's names the model lacks (not strict)
  /// "loaded 6 of 6 tensors from 'x.pt' (hookforge checkpoint, section 'model')", then what
  /// was left out.
  std::string summary() const;
};

/// Copies the tensors of `options.file` into `module`: see the top of this file. Throws
/// std::invalid_argument naming the file and every mismatch, and hookforge::checkpoint_error
/// for a file that cannot be read.
pretrained_report load_pretrained(torch::nn::Module& module, const pretrained_options& options,
                                  bool apply = true);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/pretrained-inl.hpp"
#endif
