// hookforge/torch/io/checkpoint-inl.hpp — the checkpoint container's definitions: the
// writer's and reader's sections, saving the file (atomically, behind its checksummed
// header) and reading it back; each kind's section goes through its codec. Included by
// checkpoint.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/io/checkpoint_format.hpp"
#include "hookforge/torch/io/checkpoint_module.hpp"
#include "hookforge/torch/io/checkpoint_optimizer.hpp"
#include "hookforge/torch/io/checkpoint_rng.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"
#include "hookforge/torch/io/checkpoint_values.hpp"
#include "hookforge/torch/io/crc32.hpp"
#include "hookforge/torch/io/file_descriptor.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

namespace detail::ckpt {

HOOKFORGE_INLINE std::string error_text(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    return c10_error->what_without_backtrace();
  return e.what();
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
  detail::ckpt::encode_module(section, module);
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_optimizer(
    const std::string& name, const torch::optim::Optimizer& optimizer) {
  auto section = begin_section(name, "optimizer");
  detail::ckpt::encode_optimizer(section, optimizer);
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_state(const std::string& name,
                                                                 const state_map& state) {
  auto section = begin_section(name, "state_dict");
  detail::ckpt::encode_state(section, state);
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_rng(const std::string& name) {
  auto section = begin_section(name, "rng");
  detail::ckpt::encode_rng(section);
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_int(const std::string& name,
                                                               std::int64_t value) {
  auto section = begin_section(name, "int");
  detail::ckpt::encode_value(section, c10::IValue(value));
  return end_section(name, section);
}

HOOKFORGE_INLINE checkpoint_writer& checkpoint_writer::add_double(const std::string& name,
                                                                  double value) {
  auto section = begin_section(name, "double");
  detail::ckpt::encode_value(section, c10::IValue(value));
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
  guarded(name, [&] { detail::ckpt::decode_module({path_, name, section}, module); });
}

HOOKFORGE_INLINE std::vector<std::pair<std::string, torch::Tensor>>
checkpoint_reader::module_tensors(const std::string& name) const {
  auto section = open_section(name, "module");
  return guarded(name, [&] { return detail::ckpt::module_tensors({path_, name, section}); });
}

HOOKFORGE_INLINE void checkpoint_reader::load_optimizer(const std::string& name,
                                                        torch::optim::Optimizer& optimizer) const {
  auto section = open_section(name, "optimizer");
  guarded(name, [&] { detail::ckpt::decode_optimizer({path_, name, section}, optimizer); });
}

HOOKFORGE_INLINE void checkpoint_reader::check_optimizer(
    const std::string& name, const torch::optim::Optimizer& optimizer) const {
  auto section = open_section(name, "optimizer");
  guarded(name, [&] { detail::ckpt::matching_groups({path_, name, section}, optimizer); });
}

HOOKFORGE_INLINE state_map checkpoint_reader::load_state(const std::string& name) const {
  auto section = open_section(name, "state_dict");
  return guarded(name, [&] { return detail::ckpt::decode_state({path_, name, section}); });
}

HOOKFORGE_INLINE void checkpoint_reader::load_rng(const std::string& name) const {
  auto section = open_section(name, "rng");
  guarded(name, [&] { detail::ckpt::decode_rng({path_, name, section}); });
}

HOOKFORGE_INLINE std::int64_t checkpoint_reader::load_int(const std::string& name) const {
  auto section = open_section(name, "int");
  return guarded(name, [&] { return detail::ckpt::decode_value({path_, name, section}).toInt(); });
}

HOOKFORGE_INLINE double checkpoint_reader::load_double(const std::string& name) const {
  auto section = open_section(name, "double");
  return guarded(name,
                 [&] { return detail::ckpt::decode_value({path_, name, section}).toDouble(); });
}

HOOKFORGE_INLINE void checkpoint_reader::fail(const std::string& message) const {
  detail::ckpt::fail(path_, message);
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
