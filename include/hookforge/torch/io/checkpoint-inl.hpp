// hookforge/torch/io/checkpoint-inl.hpp — checkpoint_writer's and checkpoint_reader's
// definitions: included by checkpoint.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <typeinfo>
#include <utility>
#include <vector>

#include <fcntl.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <c10/util/Exception.h>
#include <c10/util/Type.h>
#include <torch/cuda.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/checkpoint_format.hpp"
#include "hookforge/torch/io/crc32.hpp"
#include "hookforge/torch/io/file_descriptor.hpp"

namespace hookforge {

namespace detail::ckpt {

HOOKFORGE_INLINE std::string error_text(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    return c10_error->what_without_backtrace();
  return e.what();
}

HOOKFORGE_INLINE std::string shape_string(c10::IntArrayRef sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

HOOKFORGE_INLINE std::string type_name(const torch::optim::Optimizer& optimizer) {
  return c10::demangle(typeid(optimizer).name());
}

HOOKFORGE_INLINE torch::Tensor generator_state(at::Generator gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

HOOKFORGE_INLINE void set_generator_state(at::Generator gen, const torch::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state.to(torch::kCPU).contiguous());
}

HOOKFORGE_INLINE std::int64_t cuda_device_count() {
  return torch::cuda::is_available() ? static_cast<std::int64_t>(torch::cuda::device_count()) : 0;
}

HOOKFORGE_INLINE at::Generator cuda_generator(std::int64_t index) {
  return at::globalContext().defaultGenerator(
      c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index)));
}

// Options through their virtual serialize() (every built-in optimizer's options
// implement it: all of lr, momentum, betas, eps, weight_decay, ...), plus get_lr() on
// its own so custom options that only implement get_lr/set_lr keep their lr.
HOOKFORGE_INLINE void write_options(torch::serialize::OutputArchive& into, const std::string& key,
                                    const torch::optim::OptimizerOptions& options) {
  torch::serialize::OutputArchive fields(into.compilation_unit());
  bool serialized = true;
  try {
    options.serialize(fields);
  } catch (const c10::Error&) {
    serialized = false;  // custom options without serialize()
  }
  if (serialized) into.write(key, fields);
  try {
    into.write(key + ".lr", c10::IValue(options.get_lr()));
  } catch (const c10::Error&) {
    // custom options without get_lr()
  }
}

HOOKFORGE_INLINE void read_options(torch::serialize::InputArchive& from, const std::string& key,
                                   torch::optim::OptimizerOptions& options) {
  torch::serialize::InputArchive fields;
  if (from.try_read(key, fields)) options.serialize(fields);
  c10::IValue lr;
  if (from.try_read(key + ".lr", lr)) options.set_lr(lr.toDouble());
}

// Copies every entry of `from` into `to`: nested archives recursively, tensors as the
// writer stores them (registered tensors), other values as they are.
HOOKFORGE_INLINE void copy_archive(torch::serialize::InputArchive& from,
                                   torch::serialize::OutputArchive& to) {
  for (const auto& key : from.keys()) {
    torch::serialize::InputArchive nested;
    if (from.try_read(key, nested)) {
      torch::serialize::OutputArchive copy(to.compilation_unit());
      copy_archive(nested, copy);
      to.write(key, copy);
      continue;
    }
    c10::IValue value;
    from.read(key, value);
    if (value.isTensor())
      to.write(key, value.toTensor());
    else
      to.write(key, value);
  }
}

}  // namespace detail::ckpt

template <class F>
std::invoke_result_t<F&> checkpoint_reader::guarded_io(F&& body) const {
  try {
    return body();
  } catch (const std::filesystem::filesystem_error& e) {
    fail("cannot read the file: " + e.code().message());
  }
}

template <class F>
std::invoke_result_t<F&> checkpoint_reader::guarded(const std::string& name, F&& body) const {
  try {
    return body();
  } catch (const checkpoint_error&) {
    throw;
  } catch (const std::exception& e) {
    fail("section '" + name + "': " + detail::ckpt::error_text(e));
  }
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_module(const std::string& name,
                                                                  const torch::nn::Module& module) {
  auto section = begin_section(name, "module");
  torch::serialize::OutputArchive parameters(cu()), buffers(cu());
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    if (p.value().defined()) parameters.write(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true))
    if (b.value().defined()) buffers.write(b.key(), b.value(), /*is_buffer=*/true);
  section.write("parameters", parameters);
  section.write("buffers", buffers);
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_optimizer(
    const std::string& name, const torch::optim::Optimizer& optimizer) {
  auto section = begin_section(name, "optimizer");
  section.write("type", c10::IValue(detail::ckpt::type_name(optimizer)));

  torch::serialize::OutputArchive torch_state(cu());
  optimizer.save(torch_state);
  section.write("torch", torch_state);

  torch::serialize::OutputArchive groups(cu());
  const auto& param_groups = optimizer.param_groups();
  groups.write("count", c10::IValue(static_cast<std::int64_t>(param_groups.size())));
  for (std::size_t i = 0; i < param_groups.size(); ++i) {
    torch::serialize::OutputArchive group(cu()), shapes(cu());
    const auto& params = param_groups[i].params();
    group.write("size", c10::IValue(static_cast<std::int64_t>(params.size())));
    for (std::size_t j = 0; j < params.size(); ++j)
      shapes.write(std::to_string(j), c10::IValue(params[j].sizes().vec()));
    group.write("shapes", shapes);
    if (param_groups[i].has_options())
      detail::ckpt::write_options(group, "options", param_groups[i].options());
    groups.write(std::to_string(i), group);
  }
  section.write("groups", groups);
  detail::ckpt::write_options(section, "defaults", optimizer.defaults());
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_state(const std::string& name,
                                                                 const state_map& state) {
  auto section = begin_section(name, "state_dict");
  c10::List<std::string> keys;
  torch::serialize::OutputArchive values(cu());
  std::int64_t i = 0;
  for (const auto& [key, value] : state) {
    keys.push_back(key);
    values.write(std::to_string(i++), value);
  }
  section.write("keys", c10::IValue(keys));
  section.write("values", values);
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_rng(const std::string& name) {
  auto section = begin_section(name, "rng");
  section.write("cpu",
                c10::IValue(detail::ckpt::generator_state(at::detail::getDefaultCPUGenerator())));
  const std::int64_t cuda_count = detail::ckpt::cuda_device_count();
  section.write("cuda_count", c10::IValue(cuda_count));
  for (std::int64_t i = 0; i < cuda_count; ++i)
    section.write("cuda/" + std::to_string(i),
                  c10::IValue(detail::ckpt::generator_state(detail::ckpt::cuda_generator(i))));
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_int(const std::string& name,
                                                               std::int64_t value) {
  auto section = begin_section(name, "int");
  section.write("value", c10::IValue(value));
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_double(const std::string& name,
                                                                  double value) {
  auto section = begin_section(name, "double");
  section.write("value", c10::IValue(value));
  return end_section(name, section);
}

HOOKFORGE_INLINE void checkpoint_writer::save(const std::filesystem::path& path) {
  torch::serialize::OutputArchive root(cu());
  root.write("format", c10::IValue(std::string(detail::ckpt::format_name)));
  root.write("version", c10::IValue(std::int64_t{detail::ckpt::format_version}));
  root.write("sections", sections_);

  atomic_file out(path);
  detail::ckpt::file_header header;
  out.write(detail::ckpt::encode(header).data(), detail::ckpt::header_size);  // placeholder
  std::exception_ptr write_error;
  try {
    root.save_to([&](const void* data, std::size_t size) -> std::size_t {
      // LibTorch must never see a short write: it throws from its writer's destructor
      // (std::terminate) or, on its last write, ignores it. Keep the error for later.
      if (write_error) return size;
      try {
        if (data == nullptr && size > 0)
          throw checkpoint_error("hookforge: cannot save checkpoint '" + path.string() +
                                 "': LibTorch wrote a record without data");
        out.write(data, size);
        header.payload_crc = detail::crc32(header.payload_crc, data, size);
        header.payload_size += size;
      } catch (...) {
        write_error = std::current_exception();
      }
      return size;
    });
  } catch (const c10::Error& e) {
    throw checkpoint_error("hookforge: cannot save checkpoint '" + path.string() +
                           "': " + e.what_without_backtrace());
  }
  if (write_error) std::rethrow_exception(write_error);
  out.write_at(0, detail::ckpt::encode(header).data(), detail::ckpt::header_size);
  out.commit();
}

HOOKFORGE_INLINE std::shared_ptr<torch::jit::CompilationUnit> checkpoint_writer::cu() const {
  return sections_.compilation_unit();
}

HOOKFORGE_INLINE void checkpoint_writer::check_new_section(const std::string& name) const {
  if (name.empty()) throw std::invalid_argument("hookforge::checkpoint_writer: empty section name");
  if (std::find(names_.begin(), names_.end(), name) != names_.end())
    throw std::invalid_argument("hookforge::checkpoint_writer: section '" + name + "' added twice");
}

HOOKFORGE_INLINE torch::serialize::OutputArchive checkpoint_writer::begin_section(
    const std::string& name, const char* kind) {
  check_new_section(name);
  torch::serialize::OutputArchive section(cu());
  section.write("kind", c10::IValue(std::string(kind)));
  return section;
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::end_section(
    const std::string& name, torch::serialize::OutputArchive& section) {
  sections_.write(name, section);
  names_.push_back(name);
  return *this;
}

HOOKFORGE_INLINE checkpoint_reader::checkpoint_reader(std::filesystem::path path,
                                                      std::optional<torch::Device> map_location)
    : path_(std::move(path)) {
  auto file = detail::unique_fd::open(path_, O_RDONLY);
  if (!file) {
    const int err = errno;
    fail(err == ENOENT ? "no such file"
                       : "cannot open the file: " + std::generic_category().message(err));
  }
  const auto [payload_offset, payload_size] = guarded_io([&] { return locate_payload(file); });
  const std::uint64_t offset = payload_offset, size = payload_size;  // lambdas capture these

  torch::serialize::InputArchive root;
  try {
    c10::optional<torch::Device> device;
    if (map_location) device = *map_location;
    root.load_from(
        [&](std::uint64_t pos, void* buf, std::size_t n) -> std::size_t {
          if (pos >= size) return 0;
          return file.read_at(buf, std::min<std::uint64_t>(n, size - pos), offset + pos);
        },
        [size] { return static_cast<std::size_t>(size); }, device);
  } catch (const std::exception& e) {
    fail("cannot read the file: " + detail::ckpt::error_text(e));
  }
  c10::IValue format, version;
  if (!root.try_read("format", format) || !format.isString() ||
      format.toStringRef() != detail::ckpt::format_name)
    fail("not a hookforge checkpoint (top-level keys: " + hookforge::join_names(root.keys(), ", ") +
         ")");
  if (!root.try_read("version", version) || !version.isInt() ||
      version.toInt() > std::int64_t{detail::ckpt::format_version})
    fail("unsupported hookforge checkpoint version (this build reads up to " +
         std::to_string(detail::ckpt::format_version) + ")");
  if (!root.try_read("sections", sections_)) fail("the file has no sections");
  names_ = sections_.keys();
}

HOOKFORGE_INLINE bool checkpoint_reader::contains(std::string_view name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

HOOKFORGE_INLINE std::string checkpoint_reader::kind(const std::string& name) const {
  auto section = open(name);
  return kind_of(section);
}

HOOKFORGE_INLINE void checkpoint_reader::load_module(const std::string& name,
                                                     torch::nn::Module& module) const {
  auto section = open_section(name, "module");
  guarded(name, [&] {
    std::vector<std::string> problems;
    std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (into, from)
    match_tensors(section, "parameters", "parameter", module.named_parameters(true), problems,
                  copies);
    match_tensors(section, "buffers", "buffer", module.named_buffers(true), problems, copies);
    if (!problems.empty())
      fail("section '" + name + "' does not match the module " + module.name() + ":\n  " +
           hookforge::join_names(problems, "\n  "));
    torch::NoGradGuard no_grad;
    for (auto& [into, from] : copies) into.copy_(from);
  });
}

HOOKFORGE_INLINE void checkpoint_reader::load_optimizer(const std::string& name,
                                                        torch::optim::Optimizer& optimizer) const {
  auto section = open_section(name, "optimizer");
  guarded(name, [&] {
    auto group_archives = matching_groups(section, name, optimizer);
    auto& param_groups = optimizer.param_groups();
    torch::serialize::InputArchive torch_state;
    section.read("torch", torch_state);
    optimizer.state().clear();  // state of parameters that had none when saved must go
    optimizer.load(torch_state);
    for (std::size_t i = 0; i < param_groups.size(); ++i)
      if (param_groups[i].has_options())
        detail::ckpt::read_options(group_archives[i], "options", param_groups[i].options());
    detail::ckpt::read_options(section, "defaults", optimizer.defaults());
  });
}

HOOKFORGE_INLINE void checkpoint_reader::check_optimizer(
    const std::string& name, const torch::optim::Optimizer& optimizer) const {
  auto section = open_section(name, "optimizer");
  guarded(name, [&] { matching_groups(section, name, optimizer); });
}

HOOKFORGE_INLINE state_map checkpoint_reader::load_state(const std::string& name) const {
  auto section = open_section(name, "state_dict");
  return guarded(name, [&] {
    const auto keys = read(section, "keys").to<std::vector<std::string>>();
    torch::serialize::InputArchive values;
    section.read("values", values);
    state_map state;
    for (std::size_t i = 0; i < keys.size(); ++i)
      state.emplace(keys[i], read(values, std::to_string(i)));
    return state;
  });
}

HOOKFORGE_INLINE void checkpoint_reader::load_rng(const std::string& name) const {
  auto section = open_section(name, "rng");
  guarded(name, [&] {
    detail::ckpt::set_generator_state(at::detail::getDefaultCPUGenerator(),
                                      read(section, "cpu").toTensor());
    const auto saved = read(section, "cuda_count").toInt();
    const auto usable = std::min(saved, detail::ckpt::cuda_device_count());
    for (std::int64_t i = 0; i < usable; ++i)
      detail::ckpt::set_generator_state(detail::ckpt::cuda_generator(i),
                                        read(section, "cuda/" + std::to_string(i)).toTensor());
  });
}

HOOKFORGE_INLINE std::int64_t checkpoint_reader::load_int(const std::string& name) const {
  auto section = open_section(name, "int");
  return guarded(name, [&] { return read(section, "value").toInt(); });
}

HOOKFORGE_INLINE double checkpoint_reader::load_double(const std::string& name) const {
  auto section = open_section(name, "double");
  return guarded(name, [&] { return read(section, "value").toDouble(); });
}

HOOKFORGE_INLINE void checkpoint_reader::fail(const std::string& message) const {
  throw checkpoint_error("hookforge checkpoint '" + path_.string() + "': " + message);
}

HOOKFORGE_INLINE std::vector<torch::serialize::InputArchive> checkpoint_reader::matching_groups(
    torch::serialize::InputArchive& section, const std::string& name,
    const torch::optim::Optimizer& optimizer) const {
  const std::string have = detail::ckpt::type_name(optimizer);
  const std::string saved = read(section, "type").toStringRef();
  if (have != saved)
    fail("section '" + name + "' holds the state of a " + saved + ", cannot load it into a " +
         have);

  torch::serialize::InputArchive groups;
  section.read("groups", groups);
  const auto& param_groups = optimizer.param_groups();
  const auto count = read(groups, "count").toInt();
  if (count != static_cast<std::int64_t>(param_groups.size()))
    fail("section '" + name + "' has " + std::to_string(count) +
         " parameter group(s), the optimizer has " + std::to_string(param_groups.size()));

  std::vector<torch::serialize::InputArchive> group_archives(param_groups.size());
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < param_groups.size(); ++i) {
    groups.read(std::to_string(i), group_archives[i]);
    const auto& params = param_groups[i].params();
    const auto size = read(group_archives[i], "size").toInt();
    if (size != static_cast<std::int64_t>(params.size())) {
      problems.push_back("parameter group " + std::to_string(i) + " has " + std::to_string(size) +
                         " parameter(s) in the checkpoint, " + std::to_string(params.size()) +
                         " in the optimizer");
      continue;
    }
    torch::serialize::InputArchive shapes;
    group_archives[i].read("shapes", shapes);
    for (std::size_t j = 0; j < params.size(); ++j) {
      const auto found = read(shapes, std::to_string(j)).toIntVector();
      if (found != params[j].sizes().vec())
        problems.push_back("parameter group " + std::to_string(i) + ", parameter " +
                           std::to_string(j) + ": the optimizer expects shape " +
                           detail::ckpt::shape_string(params[j].sizes()) + ", the checkpoint has " +
                           detail::ckpt::shape_string(found));
    }
  }
  if (!problems.empty())
    fail("section '" + name + "' does not match the optimizer " + have + ":\n  " +
         hookforge::join_names(problems, "\n  "));
  return group_archives;
}

HOOKFORGE_INLINE std::pair<std::uint64_t, std::uint64_t> checkpoint_reader::locate_payload(
    const detail::unique_fd& file) const {
  namespace layout = detail::ckpt;
  const std::uint64_t file_size = file.size();
  layout::header_bytes bytes{};
  const std::size_t got = file.read_at(bytes.data(), bytes.size(), 0);
  const std::string_view start(reinterpret_cast<const char*>(bytes.data()), got);
  if (file_size == 0) fail("the file is empty");
  if (start.starts_with(layout::zip_signature)) return {0, file_size};  // version 1
  if (!start.starts_with(layout::magic.substr(0, std::min(got, layout::magic.size()))))
    fail(
        "cannot read the file: it starts neither with the hookforge checkpoint header nor "
        "as a zip archive (not a checkpoint, or its first bytes are corrupted)");
  if (got < layout::header_size)
    fail("the file is truncated: " + std::to_string(file_size) +
         " byte(s), fewer than its header's " + std::to_string(layout::header_size));
  if (!start.starts_with(layout::magic))
    fail("cannot read the file: its header's magic bytes are corrupted");
  const auto header = layout::decode(bytes);
  if (!header) fail("the file is corrupted: its header's checksum does not match");
  if (header->version > layout::format_version)
    fail("unsupported hookforge checkpoint version " + std::to_string(header->version) +
         " (this build reads up to " + std::to_string(layout::format_version) + ")");
  const std::uint64_t stored = file_size - layout::header_size;
  if (stored != header->payload_size)
    fail("the file is " + std::string(stored < header->payload_size ? "truncated" : "corrupted") +
         ": its header announces " + std::to_string(header->payload_size) +
         " data bytes, the file holds " + std::to_string(stored));

  std::vector<unsigned char> chunk(std::min<std::uint64_t>(stored, 1u << 20));
  std::uint32_t crc = 0;
  for (std::uint64_t pos = 0; pos < stored;) {
    const auto n = file.read_at(chunk.data(), std::min<std::uint64_t>(chunk.size(), stored - pos),
                                layout::header_size + pos);
    if (n == 0) fail("the file shrank while it was read");
    crc = detail::crc32(crc, chunk.data(), n);
    pos += n;
  }
  if (crc != header->payload_crc)
    fail("the file is corrupted: the CRC-32 of its " + std::to_string(stored) + " data bytes is " +
         layout::hex(crc) + ", its header records " + layout::hex(header->payload_crc));
  return {layout::header_size, stored};
}

HOOKFORGE_INLINE c10::IValue checkpoint_reader::read(torch::serialize::InputArchive& archive,
                                                     const std::string& key) const {
  c10::IValue value;
  archive.read(key, value);
  return value;
}

HOOKFORGE_INLINE torch::serialize::InputArchive checkpoint_reader::open(
    const std::string& name) const {
  torch::serialize::InputArchive section;
  if (!contains(name) || !sections_.try_read(name, section))
    fail("no section '" + name + "'; the file has: " + listing());
  return section;
}

HOOKFORGE_INLINE std::string checkpoint_reader::kind_of(torch::serialize::InputArchive& section) {
  c10::IValue kind;
  return section.try_read("kind", kind) && kind.isString() ? kind.toStringRef() : "unknown";
}

HOOKFORGE_INLINE torch::serialize::InputArchive checkpoint_reader::open_section(
    const std::string& name, std::string_view kind) const {
  auto section = open(name);
  const auto found = kind_of(section);
  if (found != kind)
    fail("section '" + name + "' is of kind '" + found + "', not '" + std::string(kind) + "'");
  return section;
}

HOOKFORGE_INLINE std::string checkpoint_reader::listing() const {
  if (names_.empty()) return "(no sections)";
  std::vector<std::string> parts;
  for (const auto& n : names_) {
    torch::serialize::InputArchive section;
    sections_.try_read(n, section);
    parts.push_back(n + " (" + kind_of(section) + ")");
  }
  return hookforge::join_names(parts, ", ");
}

HOOKFORGE_INLINE void checkpoint_reader::match_tensors(
    torch::serialize::InputArchive& section, const std::string& key, const std::string& what,
    const torch::OrderedDict<std::string, torch::Tensor>& expected,
    std::vector<std::string>& problems,
    std::vector<std::pair<torch::Tensor, torch::Tensor>>& copies) const {
  torch::serialize::InputArchive stored;
  section.read(key, stored);
  const auto stored_names = stored.keys();
  std::vector<std::string> wanted;
  for (const auto& item : expected) {
    const torch::Tensor& into = item.value();
    if (!into.defined()) continue;
    wanted.push_back(item.key());
    c10::IValue from;
    if (!stored.try_read(item.key(), from) || !from.isTensor()) {
      problems.push_back(what + " '" + item.key() + "' (shape " +
                         detail::ckpt::shape_string(into.sizes()) +
                         ") is missing from the checkpoint");
    } else if (from.toTensor().sizes() != into.sizes()) {
      problems.push_back(what + " '" + item.key() + "': the module expects shape " +
                         detail::ckpt::shape_string(into.sizes()) + ", the checkpoint has " +
                         detail::ckpt::shape_string(from.toTensor().sizes()));
    } else {
      copies.emplace_back(into, from.toTensor());
    }
  }
  for (const auto& stored_name : stored_names) {
    if (std::find(wanted.begin(), wanted.end(), stored_name) != wanted.end()) continue;
    c10::IValue from;
    stored.try_read(stored_name, from);
    problems.push_back("the checkpoint has " + what + " '" + stored_name + "'" +
                       (from.isTensor()
                            ? " (shape " + detail::ckpt::shape_string(from.toTensor().sizes()) + ")"
                            : std::string()) +
                       " that the module lacks");
  }
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_section_copy(
    const checkpoint_reader& from, const std::string& name) {
  check_new_section(name);
  auto stored = from.open(name);  // names the file and its sections when `name` is missing
  torch::serialize::OutputArchive section(cu());
  from.guarded(name, [&] { detail::ckpt::copy_archive(stored, section); });
  return end_section(name, section);
}

HOOKFORGE_INLINE void copy_checkpoint_sections(const std::filesystem::path& from,
                                               const std::filesystem::path& to,
                                               const std::vector<std::string>& sections) {
  checkpoint_reader in(from);
  checkpoint_writer out;
  for (const auto& name : sections) out.add_section_copy(in, name);
  out.save(to);
}

}  // namespace hookforge
