// hookforge/torch/io/pretrained.hpp — a model's starting weights from a file: a fine-tune, a
// teacher, a backbone, a model trained in PyTorch.
//
//   auto report = hookforge::load_pretrained(*model, {.file = "runs/x/best.pt"});
//   std::cout << report.summary() << "\n";   // "loaded 6 tensors from 'runs/x/best.pt' ..."
//   hookforge::load_pretrained(*student->backbone, {.file = "teacher.pt", .prefix = "backbone."});
//   hookforge::load_pretrained(*model, {.file = "epoch=9.ckpt", .strip_prefix = {"net."}});
//
// The file is any that read_weights reads (weights/weights_file.hpp), the kind told by its
// content: a torch.save archive (a state_dict, Lightning's .ckpt, MMEngine's checkpoints,
// {"model": ...}; `key` names the entry where the default guess is wrong), safetensors, a
// hookforge checkpoint (its module section `section`, "model" for the Trainer's) or a
// torch::save archive of a module. Tensors are matched by their dotted names
// ("body.0.weight"), parameters and buffers alike.
//
// Python and C++ models rarely name tensors alike (DDP's "module.", Lightning's attribute
// names). The file's names go through, in this order: `strip_prefix` (each prefix, in
// order, removed from the names that start with it), `rename` (each ECMAScript regular
// expression, in order, replaced in every name: {"^net\\.", "body."}), then `prefix` (only
// the names under it are taken, without it: MMEngine's Pretrained init, a detector's
// "backbone." into a backbone). The report lists every name that changed.
//
// A shape mismatch is always an error. With `strict` (the default), so is a tensor of the
// model missing from the file and a tensor of the file (under the prefix) the model lacks;
// without, those are left out and listed in the report. The error lists every missing,
// unexpected and mis-shaped name, each missing one with the closest names the file has, and
// nothing is copied unless everything checks: the model keeps its weights. Values are copied
// into the model's tensors (its device and dtype). `apply = false` checks and reports without
// copying (hookforge-run --check).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

struct pretrained_options {
  std::filesystem::path file;                  ///< required: any file read_weights reads
  std::string prefix = {};                     ///< take the stored tensors under it, without it
  bool strict = true;                          ///< every tensor on both sides must match
  std::string section = "model";               ///< the module section of a hookforge checkpoint
  std::string key = {};                        ///< the entry of a checkpoint holding the weights
  std::vector<std::string> strip_prefix = {};  ///< removed from the names that start with it
  std::vector<std::pair<std::string, std::string>> rename = {};  ///< (regex, replacement)
  std::vector<std::string> opaque_globals = {};                  ///< see weights_read_options
};

/// What load_pretrained found and did.
struct pretrained_report {
  std::filesystem::path file;
  std::string source;                   ///< "PyTorch archive (torch.save), entry 'state_dict'", ...
  std::vector<std::string> loaded;      ///< names copied (or, without apply, that would be)
  std::vector<std::string> missing;     ///< the model's names the file lacks (not strict)
  std::vector<std::string> unexpected;  ///< the file's names the model lacks (not strict)
  std::vector<std::pair<std::string, std::string>> renamed;  ///< (file's name, name used)
  /// "loaded 6 of 6 tensors from 'x.pt' (hookforge checkpoint, section 'model')", then how
  /// names were changed and what was left out.
  std::string summary() const;
};

/// Copies the tensors of `options.file` into `module`: see the top of this file. Throws
/// std::invalid_argument naming the file and every mismatch (and for a `rename` that is not a
/// regular expression), and hookforge::checkpoint_error for a file that cannot be read.
pretrained_report load_pretrained(torch::nn::Module& module, const pretrained_options& options,
                                  bool apply = true);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/pretrained-inl.hpp"
#endif
