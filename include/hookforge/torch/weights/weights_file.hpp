// hookforge/torch/weights/weights_file.hpp — a model's weights in the files Python reads and
// writes: PyTorch's torch.save archives (a state_dict, a Lightning or MMEngine checkpoint),
// safetensors, and hookforge's own files.
//
//   auto weights = hookforge::read_weights("resnet.pth");        // the kind told by content
//   std::cout << weights.describe() << "\n";   // "PyTorch archive (torch.save), entry
//   'state_dict'" hookforge::save_weights(*model, "espcn.safetensors",
//   hookforge::weights_format::safetensors); hookforge::save_weights(*model, "espcn.pth",
//   hookforge::weights_format::pth);
//
// What is read, told by the file's first bytes, never its name:
//   - a PyTorch zip archive (torch.save since PyTorch 1.6): unpickled by hookforge's
//     restricted reader (weights/pth.hpp), which, like Python's torch.load(weights_only=True),
//     builds only tensors, storages, OrderedDict and plain containers and scalars; a global
//     off its allow-list is refused by name and nothing of it runs;
//   - safetensors (weights/safetensors.hpp);
//   - a hookforge checkpoint (its module section `section`), or a torch::save archive of a
//     module.
// In a checkpoint the weights are one entry: `key` names it ("state_dict", "model",
// "state_dict.ema" for a nested one); without, the whole file when it is a dict of tensors,
// else the first of "state_dict" (Lightning, MMEngine), "model", "model_state_dict", "net",
// "module", "params" that holds one. `describe()` says which, and which others there were.
//
// What is written: safetensors, or a .pth that Python's default torch.load (weights-only)
// reads as an OrderedDict of tensors, named as PyTorch names a state_dict.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <torch/nn/module.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/weights/named_tensors.hpp"

namespace hookforge {

/// The formats a model's weights are written in.
enum class weights_format { safetensors, pth };

/// "safetensors" or "pth"; nullopt for another name.
HOOKFORGE_INLINE std::optional<weights_format> parse_weights_format(std::string_view name);
/// The file suffix: ".safetensors" or ".pth".
HOOKFORGE_INLINE std::string_view weights_suffix(weights_format format);

struct weights_read_options {
  /// The entry holding the weights in a checkpoint, dotted for a nested one; empty: found
  /// from the file (see the top of this file).
  std::string key = {};
  /// The module section of a hookforge checkpoint.
  std::string section = "model";
  /// Globals a .pth may name outside the weights besides the known ones (NumPy's arrays,
  /// MMEngine's HistoryBuffer and ConfigDict, Lightning's AttributeDict, ...): taken as
  /// opaque values, never called. "module.Name", as Python's weights_only error names them.
  std::vector<std::string> opaque_globals = {};
};

/// A file's weights and where in it they were.
struct weights_file {
  std::filesystem::path file = {};
  std::string kind = {};   ///< "PyTorch archive (torch.save)", "safetensors", ...
  std::string entry = {};  ///< the checkpoint's entry taken; empty: the whole file
  std::vector<std::string> other_entries = {};  ///< other entries that hold tensors
  named_tensors tensors = {};
  std::map<std::string, std::string> metadata = {};  ///< safetensors' __metadata__
  /// "PyTorch archive (torch.save), entry 'state_dict' (also: 'optimizer_states')".
  std::string describe() const;
};

/// Reads the weights of `file` (see the top of this file). Throws hookforge::checkpoint_error
/// naming the file (and the global, offset or key) for a file that cannot be read or is
/// refused, and std::invalid_argument for a `key` the file lacks (naming those it has).
HOOKFORGE_INLINE weights_file read_weights(const std::filesystem::path& file,
                                           const weights_read_options& options = {});

/// Writes `tensors` to `file` in `format`, atomically. `metadata` goes into a safetensors
/// header (a .pth has no place for it).
HOOKFORGE_INLINE void write_weights(const std::filesystem::path& file, const named_tensors& tensors,
                                    weights_format format,
                                    const std::map<std::string, std::string>& metadata = {});

/// Writes the state_dict of `module` (weights/named_tensors.hpp) to `file`, atomically.
HOOKFORGE_INLINE void save_weights(const torch::nn::Module& module,
                                   const std::filesystem::path& file, weights_format format);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/weights_file-inl.hpp"
#endif
