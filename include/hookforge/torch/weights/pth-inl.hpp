// hookforge/torch/weights/pth-inl.hpp — the torch.save archive's definitions: included by
// pth.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/Storage.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/weights/detail/pickle_globals.hpp"
#include "hookforge/torch/weights/detail/pickler.hpp"
#include "hookforge/torch/weights/detail/unpickler.hpp"
#include "hookforge/torch/weights/pth.hpp"

namespace hookforge::detail::pth {

namespace reading {

using pickle::value;

// "'x.pth'", the file as every message names it.
inline std::string quoted(const std::filesystem::path& file) { return "'" + file.string() + "'"; }

// The value under string key `key` of a dict, or null.
inline const value* lookup(const value& dict, std::string_view key) {
  if (dict.type != value::kind::dict) return nullptr;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2)
    if (dict.items[i]->type == value::kind::string && dict.items[i]->text == key)
      return dict.items[i + 1].get();
  return nullptr;
}

inline bool holds_tensors(const value& v) {
  if (v.type != value::kind::dict) return false;
  for (std::size_t i = 1; i < v.items.size(); i += 2)
    if (v.items[i]->type == value::kind::tensor) return true;
  return false;
}

inline bool only_tensors(const value& v) {
  if (v.type != value::kind::dict || v.items.empty()) return false;
  for (std::size_t i = 1; i < v.items.size(); i += 2)
    if (v.items[i]->type != value::kind::tensor) return false;
  return true;
}

// Whether a tensor is anywhere inside `v` (an optimiser's state: lists of dicts of dicts).
// Iterative, each container visited once: pickles can nest deep and refer to themselves.
inline bool contains_tensor(const value& v) {
  std::vector<const value*> todo{&v};
  std::set<const value*> seen;
  while (!todo.empty()) {
    const value* at = todo.back();
    todo.pop_back();
    if (at->type == value::kind::tensor) return true;
    if (at->is_container() && seen.insert(at).second)
      for (const auto& item : at->items) todo.push_back(item.get());
  }
  return false;
}

// The top-level entries that hold tensors, at any depth, by name.
inline std::vector<std::string> tensor_entries(const value& root) {
  std::vector<std::string> out;
  if (root.type != value::kind::dict) return out;
  for (std::size_t i = 0; i + 1 < root.items.size(); i += 2)
    if (root.items[i]->type == value::kind::string && contains_tensor(*root.items[i + 1]))
      out.push_back(root.items[i]->text);
  return out;
}

// `key` walked through nested dicts: the longest key that matches at each level, so keys
// with dots in them ("model.ema") are found too.
inline const value* walk(const value& root, std::string_view key) {
  const value* at = &root;
  while (at) {
    if (const value* whole = lookup(*at, key)) return whole;
    const value* next = nullptr;
    for (auto dot = key.rfind('.'); dot != std::string_view::npos && !next;
         dot = dot == 0 ? std::string_view::npos : key.rfind('.', dot - 1))
      if (const value* v = lookup(*at, key.substr(0, dot)); v && v->type == value::kind::dict) {
        next = v;
        key = key.substr(dot + 1);
      }
    at = next;
  }
  return nullptr;
}

struct chosen {
  const value* dict = nullptr;
  std::string name;  // empty: the whole file
};

// The entry holding the weights: weights_file.hpp says how it is chosen.
inline chosen choose(const value& root, const std::string& key, const std::filesystem::path& file) {
  const auto entries = tensor_entries(root);
  if (!key.empty()) {
    const value* v = walk(root, key);
    if (!v)
      throw std::invalid_argument(quoted(file) + " has no entry '" + key +
                                  "'; the entries that hold tensors: [" +
                                  join_names(entries, ", ") + "]");
    if (!holds_tensors(*v))
      throw std::invalid_argument(quoted(file) + ": entry '" + key + "' holds a " +
                                  pickle::type_name(*v) + ", not a dict of tensors");
    return {v, key};
  }
  if (only_tensors(root)) return {&root, ""};
  for (const char* name : {"state_dict", "model", "model_state_dict", "net", "module", "params"})
    if (const value* v = lookup(root, name); v && holds_tensors(*v)) return {v, name};
  if (entries.size() == 1 && holds_tensors(*lookup(root, entries[0])))
    return {lookup(root, entries[0]), entries[0]};
  throw checkpoint_error(quoted(file) + " holds a " + pickle::type_name(root) +
                         " with no entry hookforge takes for the weights; " +
                         (entries.empty()
                              ? std::string("none of its entries holds tensors")
                              : "the entries that hold tensors: [" + join_names(entries, ", ") +
                                    "]: name one with `key`"));
}

// The storages of one archive, each read once, when a tensor asks for it.
class storages {
 public:
  storages(caffe2::serialize::PyTorchStreamReader& reader, const std::filesystem::path& file)
      : reader_(reader), file_(file), file_size_(std::filesystem::file_size(file)) {}

  c10::Storage get(const pickle::storage_ref& ref) {
    auto found = read_.find(ref.key);
    if (found != read_.end()) return found->second;
    return read_.emplace(ref.key, read(ref)).first->second;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw checkpoint_error(quoted(file_) + ": " + what);
  }

  c10::Storage read(const pickle::storage_ref& ref) {
    const std::string record = "data/" + ref.key;
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(ref.numel), c10::elementSize(ref.dtype),
                               &bytes) ||
        bytes > file_size_)
      fail("storage '" + ref.key + "' claims " + std::to_string(ref.numel) +
           " elements, more than the file's " + std::to_string(file_size_) + " bytes hold");
    if (!reader_.hasRecord(record)) fail("storage '" + ref.key + "' has no record " + record);
#if HOOKFORGE_HAS_ZIP_RECORD_SIZE
    if (const auto size = reader_.getRecordSize(record); size != bytes)
      fail("record " + record + " holds " + std::to_string(size) + " bytes, its storage claims " +
           std::to_string(bytes));
#endif
    auto [data, size] = reader_.getRecord(record);
    if (size != bytes)
      fail("record " + record + " holds " + std::to_string(size) + " bytes, its storage claims " +
           std::to_string(bytes));
    return c10::Storage(c10::Storage::use_byte_size_t(), size, std::move(data), nullptr, false);
  }

  caffe2::serialize::PyTorchStreamReader& reader_;
  const std::filesystem::path& file_;
  std::uintmax_t file_size_;
  std::map<std::string, c10::Storage> read_;
};

inline at::Tensor materialize(const pickle::tensor_recipe& recipe, storages& from) {
  auto storage = from.get(*recipe.storage);
  return at::empty({0}, at::TensorOptions().dtype(recipe.dtype))
      .set_(std::move(storage), recipe.offset, recipe.sizes, recipe.strides);
}

inline std::string record_text(caffe2::serialize::PyTorchStreamReader& reader, const char* name) {
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// The archive opened by LibTorch's reader, its errors named with the file.
inline std::unique_ptr<caffe2::serialize::PyTorchStreamReader> open(
    const std::filesystem::path& file) {
  try {
    auto reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(file.string());
    if (!reader->hasRecord("data.pkl"))
      throw checkpoint_error(quoted(file) +
                             " is a zip archive without data.pkl: not a torch.save archive");
#if HOOKFORGE_HAS_ZIP_RECORD_SIZE
    if (reader->getRecordSize("data.pkl") > std::filesystem::file_size(file))
      throw checkpoint_error(quoted(file) + ": data.pkl claims more bytes than the file holds");
#endif
    if (reader->hasRecord("byteorder") && record_text(*reader, "byteorder") != "little")
      throw checkpoint_error(quoted(file) + " was written on a big-endian machine ('" +
                             record_text(*reader, "byteorder") + "' byte order): not read");
    return reader;
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw checkpoint_error(quoted(file) +
                           " is not a readable zip archive (truncated or corrupt?): " +
                           what.substr(0, what.find('\n')));
  }
}

}  // namespace reading

HOOKFORGE_INLINE bool looks_legacy(std::string_view head) {
  // pickle.dump(MAGIC_NUMBER, f, protocol=2): PROTO 2, LONG1 of 10 bytes, 0x1950a86a20f9469cfc6c.
  static constexpr std::string_view magic{
      "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14};
  return head.starts_with(magic);
}

HOOKFORGE_INLINE contents read(const std::filesystem::path& file, const std::string& key,
                               const std::vector<std::string>& opaque_globals) {
  using namespace reading;
  auto reader = open(file);
  auto [pickled, size] = reader->getRecord("data.pkl");
  auto opaque = pickle::default_opaque_globals();
  opaque.insert(opaque.end(), opaque_globals.begin(), opaque_globals.end());
  pickle::unpickler unpickler(std::string_view(static_cast<const char*>(pickled.get()), size),
                              quoted(file) + " (data.pkl)", std::move(opaque));
  const auto root = unpickler.load();
  const auto [dict, name] = choose(*root, key, file);

  contents out;
  out.entry = name;
  if (!name.empty())  // a checkpoint: its other entries that hold tensors
    for (const auto& entry : tensor_entries(*root))
      if (entry != name) out.other_entries.push_back(entry);
  storages from(*reader, file);
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2) {
    const auto& key = *dict->items[i];
    const auto& item = *dict->items[i + 1];
    if (key.type != value::kind::string) continue;
    if (item.type == value::kind::tensor)
      out.tensors.emplace_back(key.text, materialize(*item.tensor, from));
    else if (item.type == value::kind::object && item.flag)  // a tensor of a dtype not here
      throw checkpoint_error(quoted(file) + ": tensor '" + key.text + "' has dtype " + item.text +
                             ", which LibTorch " + TORCH_VERSION + " has no type for");
  }
  return out;
}

HOOKFORGE_INLINE void write(const std::filesystem::path& file, const named_tensors& tensors) {
  auto contents = pickle::state_dict_pickle(tensors);
  atomic_file out(file);
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t n) {
    out.write(data, n);
    return n;
  });
  writer.writeRecord("data.pkl", contents.pickle.data(), contents.pickle.size());
  writer.writeRecord("byteorder", "little", 6);
  for (const auto& [key, storage] : contents.storages)
    writer.writeRecord("data/" + key, storage.data_ptr().get(), storage.nbytes());
  writer.writeEndOfFile();
  out.commit();
}

}  // namespace hookforge::detail::pth
