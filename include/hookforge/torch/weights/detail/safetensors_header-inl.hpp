// hookforge/torch/weights/detail/safetensors_header-inl.hpp — a safetensors header read and
// validated before anything it describes is allocated (the file's bytes, mapped or read): its
// length, its JSON (nesting, keys given twice), each entry's dtype, shape and offsets, the
// metadata, and the data's coverage. Included by safetensors-inl.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/io/file_descriptor.hpp"
#include "hookforge/torch/weights/detail/safetensors_dtypes-inl.hpp"

namespace hookforge::detail::safetensors {

// The file's bytes: mapped where mmap works, so that a tensor is copied once, from the page
// cache into its own memory; read with pread where it does not (a file system without mmap).
// A file truncated by another process while mapped raises SIGBUS, as it does for Python's
// safetensors; the pread path reports it.
class file_bytes {
 public:
  explicit file_bytes(const std::filesystem::path& file) : file_(file) {
    fd_ = unique_fd::open(file, O_RDONLY | O_NONBLOCK);  // a FIFO must not block the open
    if (!fd_) fail(file, "cannot be opened: " + std::generic_category().message(errno));
    struct stat st{};
    if (::fstat(fd_.get(), &st) != 0)
      fail(file, "cannot be read: " + std::generic_category().message(errno));
    if (!S_ISREG(st.st_mode)) fail(file, "is not a regular file");
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ == 0 || size_ > std::numeric_limits<std::size_t>::max()) return;
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_.get(), 0);
    if (map == MAP_FAILED) return;
    map_ = static_cast<const unsigned char*>(map);
    (void)::madvise(map, size_, MADV_SEQUENTIAL);  // tensors are copied in file order
  }
  file_bytes(const file_bytes&) = delete;
  file_bytes& operator=(const file_bytes&) = delete;
  ~file_bytes() {
    if (map_ != nullptr) (void)::munmap(const_cast<unsigned char*>(map_), size_);
  }

  std::uint64_t size() const noexcept { return size_; }

  // Copies bytes [offset, offset + n), which the caller has checked lie within size().
  void copy(void* to, std::uint64_t offset, std::size_t n) const {
    if (map_ != nullptr) {
      for (std::size_t done = 0; done < n; done += copy_chunk) {
        const std::size_t chunk = std::min(copy_chunk, n - done);
        std::memcpy(static_cast<unsigned char*>(to) + done, map_ + offset + done, chunk);
        release(offset + done, chunk);
      }
      return;
    }
    std::size_t got = 0;
    try {
      got = fd_.read_at(to, n, offset);
    } catch (const std::filesystem::filesystem_error& e) {
      fail(file_, "cannot be read: " + e.code().message());
    }
    if (got != n) fail(file_, "ended while being read (truncated by another process?)");
  }

 private:
  // Unmaps the pages of bytes copied out (they stay in the page cache; a later access maps
  // them again), chunk by chunk, so that a large file costs its tensors' memory, not twice
  // that.
  static constexpr std::size_t copy_chunk = std::size_t{16} << 20;
  void release(std::uint64_t offset, std::size_t n) const {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t first = offset / page * page;
    (void)::madvise(const_cast<unsigned char*>(map_) + first, offset + n - first, MADV_DONTNEED);
  }

  std::filesystem::path file_;
  unique_fd fd_;
  std::uint64_t size_ = 0;
  const unsigned char* map_ = nullptr;
};

// N, the header's length, checked against the limit and the file.
HOOKFORGE_INLINE std::uint64_t header_length(const std::filesystem::path& file,
                                             const file_bytes& bytes) {
  if (bytes.size() < 8)
    fail(file, std::to_string(bytes.size()) +
                   " bytes, too short for a safetensors file (it starts with an 8-byte header "
                   "length)");
  std::array<unsigned char, 8> head{};
  bytes.copy(head.data(), 0, head.size());
  const std::uint64_t n = load_le64(head.data());
  if (n > max_header_bytes)
    fail(file, "header length " + std::to_string(n) + " exceeds safetensors' limit of " +
                   std::to_string(max_header_bytes) + " bytes");
  if (n > bytes.size() - 8)
    fail(file, "header length " + std::to_string(n) + " reaches past the end of the file (" +
                   std::to_string(bytes.size()) + " bytes)");
  return n;
}

// nlohmann's SAX events made into its DOM, as json::parse does, refusing nesting deeper than
// the format's as soon as it opens (nothing deep is ever built) and a key given twice in one
// object (the format disallows it; json::parse keeps the last silently). Not json::parse
// with a parser callback: in nlohmann 3.11 that scans the parent object at every object's
// end, quadratic in a header of many small entries (a 100 MB header of them would take
// hours).
class header_builder {
 public:
  explicit header_builder(const std::filesystem::path& file) : file_(file) {}

  json& result() { return result_; }

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(json::number_integer_t value) { return put(value); }
  bool number_unsigned(json::number_unsigned_t value) { return put(value); }
  bool number_float(json::number_float_t value, const json::string_t&) { return put(value); }
  bool string(json::string_t& value) { return put(std::move(value)); }
  bool binary(json::binary_t& value) { return put(std::move(value)); }  // not in JSON text
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& name) {
    json& object = *open_.back();
    if (object.contains(name)) fail(file_, "the header has the key '" + name + "' twice");
    slot_ = &object[name];
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    fail(file_, "the header is not valid JSON: " + printable(e.what()));
  }

 private:
  // Places `value` where the parser is: the top, the array open, or the key just read. A
  // container's elements move only when one is added, and then none of them is open.
  json* place(json value) {
    if (open_.empty()) return &(result_ = std::move(value));
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    return &(*slot_ = std::move(value));
  }
  bool put(json value) {
    place(std::move(value));
    return true;
  }
  bool open(json container) {
    if (open_.size() >= static_cast<std::size_t>(max_json_depth))
      fail(file_,
           "the header nests deeper than safetensors' 3 levels (an object of tensors, each an "
           "object with arrays)");
    open_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  const std::filesystem::path& file_;
  json result_;
  std::vector<json*> open_;  // the containers open, outermost first
  json* slot_ = nullptr;     // the value of the key just read
};

HOOKFORGE_INLINE json parse_header(const std::filesystem::path& file, std::string_view text) {
  if (text.empty() || text.front() != '{')
    fail(file, "the header does not start with '{' (it must be a JSON object)");
  // nlohmann's lexer takes a NUL byte for the end of the input and would ignore what follows;
  // JSON text holds none (a string escapes it).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    fail(file, "the header holds a NUL byte at offset " + std::to_string(8 + nul) +
                   " of the file, which JSON text cannot");
  header_builder builder(file);
  json::sax_parse(text.begin(), text.end(), &builder);
  return std::move(builder.result());
}

// A JSON non-negative integer, written as one: not 1.0, 1e2 or -0 (serde refuses those
// too); nlohmann reads one beyond 64 bits as a float, refused too.
HOOKFORGE_INLINE std::optional<std::uint64_t> unsigned_of(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  return std::nullopt;
}

HOOKFORGE_INLINE const dtype_info& parse_dtype(const std::filesystem::path& file,
                                               const std::string& tensor, const json& value) {
  const dtype_info* dtype = value.is_string() ? find_dtype(value.get<std::string>()) : nullptr;
  if (dtype == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& d : dtypes) names.push_back(d.name);
    fail(file,
         tensor + " has dtype " + excerpt(value) + "; expected one of " + join_names(names, ", "));
  }
  if (dtype->type == c10::ScalarType::Undefined)
    fail(file, tensor + " has dtype " + std::string(dtype->name) + ", which LibTorch " +
                   TORCH_VERSION + " has no type for");
  return *dtype;
}

HOOKFORGE_INLINE std::vector<std::uint64_t> parse_shape(const std::filesystem::path& file,
                                                        const std::string& tensor,
                                                        const json& value) {
  constexpr auto max_size = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::vector<std::uint64_t> shape;
  bool valid = value.is_array();
  for (std::size_t i = 0; valid && i < value.size(); ++i) {
    const auto n = unsigned_of(value[i]);
    valid = n && *n <= max_size;  // LibTorch's sizes are int64_t
    if (valid) shape.push_back(*n);
  }
  if (!valid)
    fail(file,
         tensor + " has shape " + excerpt(value) + "; expected an array of non-negative integers");
  return shape;
}

HOOKFORGE_INLINE std::pair<std::uint64_t, std::uint64_t> parse_offsets(
    const std::filesystem::path& file, const std::string& tensor, const json& value,
    std::uint64_t data_size) {
  std::optional<std::uint64_t> begin, end;
  if (value.is_array() && value.size() == 2)
    begin = unsigned_of(value[0]), end = unsigned_of(value[1]);
  if (!begin || !end || *begin > *end)
    fail(file, tensor + " has data_offsets " + excerpt(value) +
                   "; expected [begin, end], non-negative integers with begin <= end");
  if (*end > data_size)
    fail(file, tensor + " has data_offsets " + range_text(*begin, *end) + " but the file holds " +
                   std::to_string(data_size) + " bytes of data after the header");
  return {*begin, *end};
}

// The elements multiplied left to right with overflow checks, as the Rust library does, then
// the bits; nullopt when either overflows 64 bits.
HOOKFORGE_INLINE std::optional<std::uint64_t> bits_of(const std::vector<std::uint64_t>& shape,
                                                      std::uint64_t bits_per_element) {
  std::uint64_t count = 1;
  for (const auto dim : shape)
    if (__builtin_mul_overflow(count, dim, &count)) return std::nullopt;
  if (__builtin_mul_overflow(count, bits_per_element, &count)) return std::nullopt;
  return count;
}

// Checks that the entry's shape and dtype fill its byte range exactly.
HOOKFORGE_INLINE void check_size(const std::filesystem::path& file, const std::string& tensor,
                                 const entry& e) {
  const std::string what =
      tensor + " has shape " + shape_text(e.shape) + " of " + std::string(e.dtype->name);
  const auto bits = bits_of(e.shape, e.dtype->bits);
  if (!bits) fail(file, what + ", whose size overflows 64 bits");
  if (*bits % 8 != 0) fail(file, what + ", which is not a whole number of bytes");
  const std::uint64_t held = e.end - e.begin;
  if (*bits / 8 != held)
    fail(file, what + " (" + std::to_string(*bits / 8) + " bytes) but data_offsets " +
                   range_text(e.begin, e.end) + " hold " + std::to_string(held) + " bytes");
}

// LibTorch's sizes: the file's, but for F4, whose last dimension LibTorch counts in pairs.
HOOKFORGE_INLINE std::vector<std::int64_t> torch_sizes(const std::filesystem::path& file,
                                                       const std::string& tensor, const entry& e) {
  std::vector<std::int64_t> sizes(e.shape.begin(), e.shape.end());
  if (e.dtype->type == f4_type) {
    if (sizes.empty() || sizes.back() % 2 != 0)
      fail(file, tensor + " has shape " + shape_text(e.shape) +
                     " of F4; LibTorch's Float4_e2m1fn_x2 needs an even last dimension");
    sizes.back() /= 2;
  }
  // LibTorch's strides are products of the sizes (a 0 counting as 1), also when a size is 0
  // and the tensor holds nothing: [0, 2^62, 2^62] fits the file but not a tensor.
  std::int64_t stride = 1;
  for (const auto size : sizes)
    if (__builtin_mul_overflow(stride, std::max<std::int64_t>(size, 1), &stride))
      fail(file, tensor + " has shape " + shape_text(e.shape) +
                     ", whose strides overflow LibTorch's 64-bit integers");
  return sizes;
}

HOOKFORGE_INLINE entry parse_entry(const std::filesystem::path& file, const std::string& name,
                                   const json& value, std::uint64_t data_size) {
  const std::string tensor = "tensor '" + name + "'";
  if (!value.is_object())
    fail(file, tensor + " is " + excerpt(value) +
                   "; expected an object of dtype, shape and data_offsets");
  for (const auto& item : value.items())
    if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets")
      fail(file, tensor + " has the unknown key '" + item.key() +
                     "'; expected dtype, shape and data_offsets");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) fail(file, tensor + " lacks '" + key + "'");
  entry e;
  e.name = name;
  e.dtype = &parse_dtype(file, tensor, value.at("dtype"));
  e.shape = parse_shape(file, tensor, value.at("shape"));
  std::tie(e.begin, e.end) = parse_offsets(file, tensor, value.at("data_offsets"), data_size);
  check_size(file, tensor, e);
  e.sizes = torch_sizes(file, tensor, e);
  return e;
}

HOOKFORGE_INLINE std::map<std::string, std::string> parse_metadata(
    const std::filesystem::path& file, const json& value) {
  std::map<std::string, std::string> metadata;
  if (value.is_null()) return metadata;  // serde reads null as no metadata
  if (!value.is_object())
    fail(file, "__metadata__ is " + excerpt(value) + "; expected an object of strings");
  for (const auto& item : value.items()) {
    if (!item.value().is_string())
      fail(file, "__metadata__ '" + item.key() + "' is " + excerpt(item.value()) +
                     "; safetensors metadata values must be strings");
    metadata.emplace(item.key(), item.value().get<std::string>());
  }
  return metadata;
}

// Sorts the entries by their ranges and checks that these cover the data exactly: from 0,
// each where the previous ended, the last at the end of the file. The README asks for no
// holes (a hole could hide a second file format, a polyglot); the Rust library (Metadata::
// validate and read_metadata) enforces exactly this, trailing bytes included.
HOOKFORGE_INLINE void check_coverage(const std::filesystem::path& file, std::vector<entry>& entries,
                                     std::uint64_t data_size) {
  std::stable_sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  std::uint64_t covered = 0;
  const entry* previous = nullptr;
  for (const auto& e : entries) {
    const std::string tensor =
        "tensor '" + e.name + "' (data_offsets " + range_text(e.begin, e.end) + ")";
    if (e.begin < covered)
      fail(file, tensor + " overlaps tensor '" + previous->name + "' (data_offsets " +
                     range_text(previous->begin, previous->end) + ")");
    if (e.begin > covered)
      fail(file, tensor + " leaves bytes " + range_text(covered, e.begin) +
                     " of the data unused; safetensors' data have no holes");
    covered = e.end;
    previous = &e;
  }
  if (covered != data_size)
    fail(file, "the tensors' data end at byte " + std::to_string(covered) + " but the file holds " +
                   std::to_string(data_size) +
                   " bytes of data after the header; safetensors' data have no trailing bytes");
}

}  // namespace hookforge::detail::safetensors
