// hookforge/torch/io/checkpoint.hpp — one file holding a training run's state as named
// sections: modules, optimizers (with their param-group options), state_dicts, RNG
// state, counters.
//
//   hookforge::checkpoint_writer{}
//       .add_module("model", model)
//       .add_optimizer("optimizer", optimizer)
//       .add_state("scheduler", scheduler.state_dict())
//       .add_rng()
//       .add_int("step", step)
//       .save("run/last.ckpt");                          // atomic: temp + fsync + rename
//
//   hookforge::checkpoint_reader ckpt("run/last.ckpt");
//   ckpt.load_module("model", model);                    // checks names and shapes first
//   ckpt.load_optimizer("optimizer", optimizer);         // state AND lr/momentum/betas/...
//   scheduler.load_state_dict(ckpt.load_state("scheduler"));
//   ckpt.load_rng();
//   step = ckpt.load_int("step");
//   epochs = ckpt.load_state_value<std::int64_t>("trainer", "completed_epochs");
//
//   hookforge::copy_checkpoint_sections("run/last.ckpt", "model.ckpt", {"model"});  // stripped
//
// Why not torch::save/torch::load: LibTorch 1.13's Optimizer::load drops the
// param-group options (a changed learning rate comes back as the constructor's), and
// Module::load neither reports missing/extra parameters nor shape mismatches (it
// silently re-shapes). The sections live in a regular torch::serialize archive:
//   format = "hookforge-checkpoint", version = 2, sections/<name>/{kind, ...},
// written behind a header holding its size and CRC-32 (see checkpoint_format.hpp), so
// that a flipped or lost byte is an error on load, never silently wrong values.
//
// This header is the container: the writer and reader open, close, find and copy the
// sections, and save and read the file. What a section of each kind holds, and how it is
// checked and loaded, is its kind's codec: checkpoint_module.hpp, checkpoint_optimizer.hpp,
// checkpoint_rng.hpp, checkpoint_values.hpp (state_dict, int, double), over what they share
// in checkpoint_section.hpp.
//
// Saving never loses the previous file: the archive streams through atomic_file (temp +
// fsync + rename, every write checked), so a full disk throws naming the path instead of
// renaming a truncated file over the last good one, and a killed save's temp file is
// cleaned up by the next save.
//
// The writer references the tensors it is given (no copies): call save() before the
// tensors change. Every load error is a hookforge::checkpoint_error whose message starts
// with "hookforge checkpoint '<path>': " and names the section (and key) concerned.
// See docs/checkpoints.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/io/file_descriptor.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

class checkpoint_reader;

class checkpoint_writer {
 public:
  // Parameters and buffers by their dotted names ("0.weight", "encoder.bn.running_mean").
  checkpoint_writer& add_module(const std::string& name, const torch::nn::Module& module);
  template <class M>
  checkpoint_writer& add_module(const std::string& name, const torch::nn::ModuleHolder<M>& module) {
    return add_module(name, static_cast<const torch::nn::Module&>(*module.ptr()));
  }

  // Per-parameter state (momentum buffers, exp_avg, step, ...) through the optimizer's
  // own save(), plus every param group's options and the defaults.
  checkpoint_writer& add_optimizer(const std::string& name,
                                   const torch::optim::Optimizer& optimizer);

  // Any IValues: ints, doubles, bools, strings, tensors, lists, ... (keys are free text).
  checkpoint_writer& add_state(const std::string& name, const state_map& state);

  // Snapshot (taken now) of the default CPU generator and, when CUDA is available, of
  // every CUDA device's default generator.
  checkpoint_writer& add_rng(const std::string& name = "rng");

  checkpoint_writer& add_int(const std::string& name, std::int64_t value);

  checkpoint_writer& add_double(const std::string& name, double value);

  // The section `name` of a checkpoint being read, as it is there (every kind; checked
  // when `from` was opened). What copy_checkpoint_sections() is made of.
  checkpoint_writer& add_section_copy(const checkpoint_reader& from, const std::string& name);

  const std::vector<std::string>& sections() const noexcept { return names_; }

  // Writes every section to `path` atomically (see atomic_file.hpp), in the checksummed
  // format of checkpoint_format.hpp; may be called again. The archive streams straight
  // into the temp file (no copy in memory). Throws checkpoint_error for torch
  // serialisation errors, std::filesystem::filesystem_error naming `path` for file-system
  // ones (disk full, quota, I/O error); either way `path` keeps its previous contents.
  void save(const std::filesystem::path& path);

 private:
  std::shared_ptr<torch::jit::CompilationUnit> cu() const;

  void check_new_section(const std::string& name) const;

  torch::serialize::OutputArchive begin_section(const std::string& name, const char* kind);

  checkpoint_writer& end_section(const std::string& name, torch::serialize::OutputArchive& section);

  torch::serialize::OutputArchive sections_;
  std::vector<std::string> names_;
};

class checkpoint_reader {
 public:
  // Reads the whole file. `map_location` moves every stored tensor to that device while
  // loading (as torch::load's device argument). Throws checkpoint_error when the file is
  // missing, unreadable, corrupted (checksum mismatch, truncated) or not a hookforge
  // checkpoint. Version 1 files (no checksum) are read too.
  explicit checkpoint_reader(std::filesystem::path path,
                             std::optional<torch::Device> map_location = std::nullopt);

  const std::filesystem::path& path() const noexcept { return path_; }
  const std::vector<std::string>& sections() const noexcept { return names_; }
  bool contains(std::string_view name) const;
  // "module", "optimizer", "state_dict", "rng", "int" or "double".
  std::string kind(const std::string& name) const;

  // All-or-nothing: every parameter and buffer is checked (names and shapes) before any
  // is copied; a mismatch throws naming each offending tensor with both shapes. Values
  // are copied into the existing tensors (device and dtype of the module are kept).
  void load_module(const std::string& name, torch::nn::Module& module) const;
  template <class M>
  void load_module(const std::string& name, const torch::nn::ModuleHolder<M>& module) const {
    load_module(name, static_cast<torch::nn::Module&>(*module.ptr()));
  }

  // The parameters and buffers of module section `name` by their dotted names, as stored
  // (what load_pretrained reads from a checkpoint).
  std::vector<std::pair<std::string, torch::Tensor>> module_tensors(const std::string& name) const;

  // Restores the per-parameter state exactly and every param group's options (lr,
  // momentum, betas, weight decay, ...) and the defaults. The optimizer must be of the
  // same type, with the same number of groups and parameter shapes as when saved.
  void load_optimizer(const std::string& name, torch::optim::Optimizer& optimizer) const;

  // What load_optimizer checks (type, groups, parameter shapes), without loading: the
  // optimizer is left as it is. Throws as load_optimizer would.
  void check_optimizer(const std::string& name, const torch::optim::Optimizer& optimizer) const;

  state_map load_state(const std::string& name) const;

  // One required entry of a state_dict section, read with state_value<T> (io/state_map.hpp;
  // T = c10::IValue: as stored). A missing key or a value of another kind throws a
  // checkpoint_error naming the file, the section and the key.
  //   completed = ckpt.load_state_value<std::int64_t>("trainer", "completed_epochs");
  template <class T = c10::IValue>
  T load_state_value(const std::string& name, const std::string& key) const {
    const state_map state = load_state(name);
    try {
      return state_value<T>(state, "", key);
    } catch (const std::invalid_argument& e) {
      fail("section '" + name + "': " + e.what());
    }
  }

  // Restores the CPU generator and the CUDA generators of the devices present both in
  // the file and on this machine (others are left alone; none on a CPU-only machine).
  void load_rng(const std::string& name = "rng") const;

  std::int64_t load_int(const std::string& name) const;

  double load_double(const std::string& name) const;

 private:
  friend class checkpoint_writer;  // add_section_copy reads a section as it is stored

  [[noreturn]] void fail(const std::string& message) const;

  // Runs file reads, turning their filesystem_errors into checkpoint_errors.
  template <class F>
  std::invoke_result_t<F&> guarded_io(F&& body) const;

  // (offset, size) of the torch archive in the file, after checking header and checksum.
  std::pair<std::uint64_t, std::uint64_t> locate_payload(const detail::unique_fd& file) const;

  // Runs `body`, turning torch/std errors into checkpoint_errors naming file and section.
  template <class F>
  std::invoke_result_t<F&> guarded(const std::string& name, F&& body) const;

  torch::serialize::InputArchive open(const std::string& name) const;

  static std::string kind_of(torch::serialize::InputArchive& section);

  torch::serialize::InputArchive open_section(const std::string& name, std::string_view kind) const;

  std::string listing() const;

  std::filesystem::path path_;
  mutable torch::serialize::InputArchive sections_;
  std::vector<std::string> names_;
};

// Writes a checkpoint at `to` (atomically, as checkpoint_writer::save) holding only the
// `sections` of the checkpoint at `from`, in that order: a stripped copy to publish, such
// as the model alone. A section `from` lacks is a checkpoint_error naming the file and the
// sections it has; `to` is then left as it was.
//   hookforge::copy_checkpoint_sections("run/epoch_10.pt", "model.pt", {"model"});
HOOKFORGE_INLINE void copy_checkpoint_sections(const std::filesystem::path& from,
                                               const std::filesystem::path& to,
                                               const std::vector<std::string>& sections);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint-inl.hpp"
#endif
