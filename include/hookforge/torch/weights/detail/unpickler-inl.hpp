// hookforge/torch/weights/detail/unpickler-inl.hpp — the restricted unpickler's definitions:
// included by unpickler.hpp header-only, compiled into hookforge::torch_compiled otherwise.
//
// The opcodes are in unpickler_opcodes-inl.hpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/io/checkpoint_error.hpp"
#include "hookforge/torch/weights/detail/pickle_globals.hpp"
#include "hookforge/torch/weights/detail/unpickler.hpp"
#include "hookforge/torch/weights/detail/unpickler_opcodes-inl.hpp"

namespace hookforge::detail::pickle {

static_assert(std::endian::native == std::endian::little,
              "the pickle and weights readers assume a little-endian host");

HOOKFORGE_INLINE const std::vector<std::string>& default_opaque_globals() {
  static const std::vector<std::string> names{
      "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct",
      "numpy.core.multiarray.scalar", "numpy._core.multiarray.scalar", "numpy.ndarray",
      "numpy.dtype", "numpy.dtypes.Float64DType", "numpy.dtypes.Float32DType",
      "numpy.dtypes.Int64DType", "mmengine.logging.history_buffer.HistoryBuffer",
      "mmengine.config.config.ConfigDict", "lightning.fabric.utilities.data.AttributeDict",
      "pytorch_lightning.utilities.parsing.AttributeDict", "argparse.Namespace",
      "pathlib.PosixPath", "pathlib.WindowsPath", "copyreg._reconstructor",
      // MMEngine's HistoryBuffer pickles its statistics methods as getattr(HistoryBuffer,
      // 'min'): the classic pickle gadget, harmless here, where nothing is ever called.
      "builtins.getattr"};
  return names;
}

HOOKFORGE_INLINE unpickler::unpickler(std::string_view data, std::string source,
                                      std::vector<std::string> opaque_globals)
    : data_(data), source_(std::move(source)), opaque_(std::move(opaque_globals)) {}

HOOKFORGE_INLINE unpickler::~unpickler() {
  // Every container is in the arena: emptying each leaves no cycle and no deep chain, so
  // the values are destroyed one level at a time.
  for (auto& v : arena_) v->items.clear();
}

HOOKFORGE_INLINE void unpickler::fail(const std::string& what) const {
  throw checkpoint_error(source_ + ": " + what + " (at byte " + std::to_string(op_pos_) + ")");
}

HOOKFORGE_INLINE std::string_view unpickler::take(std::size_t n) {
  if (n > data_.size() - pos_)
    fail("the pickle ends " + std::to_string(n - (data_.size() - pos_)) +
         " bytes short (truncated or corrupt)");
  auto out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

HOOKFORGE_INLINE std::uint64_t unpickler::little_endian(std::size_t n) {
  const auto bytes = take(n);
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= std::uint64_t{static_cast<std::uint8_t>(bytes[i])} << (8 * i);
  return v;
}

HOOKFORGE_INLINE std::string_view unpickler::line() {
  const auto end = data_.find('\n', pos_);
  if (end == std::string_view::npos)
    fail("the pickle ends inside a text argument (truncated or corrupt)");
  const auto length = end - pos_;
  return take(length + 1).substr(0, length);
}

HOOKFORGE_INLINE value_ptr unpickler::keep(value_ptr v) {
  if (v->is_container()) arena_.push_back(v);
  return v;
}

HOOKFORGE_INLINE value_ptr unpickler::pop() {
  if (stack_.empty()) fail("an opcode pops an empty stack");
  auto v = std::move(stack_.back());
  stack_.pop_back();
  return v;
}

HOOKFORGE_INLINE value_ptr& unpickler::top() {
  if (stack_.empty()) fail("an opcode reads an empty stack");
  return stack_.back();
}

HOOKFORGE_INLINE std::vector<value_ptr> unpickler::pop_to_mark() {
  if (marks_.empty()) fail("an opcode looks for a MARK that is not there");
  auto items = std::move(stack_);
  stack_ = std::move(marks_.back());
  marks_.pop_back();
  return items;
}

HOOKFORGE_INLINE value_ptr unpickler::tuple_of(std::vector<value_ptr> items) {
  auto t = keep(make(value::kind::tuple));
  t->items = std::move(items);
  return t;
}

HOOKFORGE_INLINE value_ptr unpickler::load() {
  while (true) {
    op_pos_ = pos_;
    const auto code = static_cast<std::uint8_t>(take(1)[0]);
    if (!step(code)) break;
  }
  if (stack_.size() != 1 || !marks_.empty())
    fail("the pickle stops with " + std::to_string(stack_.size()) + " values on its stack");
  return stack_.back();
}

HOOKFORGE_INLINE value_ptr unpickler::global(const std::string& module, const std::string& name) {
  // Python 3 writes protocol 2's globals under Python 2's module names (fix_imports).
  const std::string full = (module == "__builtin__" ? "builtins"
                            : module == "copy_reg"  ? "copyreg"
                                                    : module) +
                           "." + name;
  auto v = make(value::kind::global);
  v->text = full;
  v->dtype = dtype_global(full);  // Undefined for one this LibTorch lacks
  if (names_dtype(full)) v->type = value::kind::dtype;
  if (allowed_global(full)) return v;
  if (std::find(opaque_.begin(), opaque_.end(), full) != opaque_.end()) {
    v->type = value::kind::object;
    return v;
  }
  fail("the pickle names the global " + full +
       ", which is not on the allow-list (tensors, storages, OrderedDict, plain containers "
       "and scalars); nothing of it ran. If it is data outside the weights, list it in "
       "opaque_globals");
}

HOOKFORGE_INLINE value_ptr unpickler::call(const value_ptr& callable, const value_ptr& args) {
  if (callable->type == value::kind::object) {  // an opaque global: never called
    auto v = make(value::kind::object);
    v->text = callable->text;
    return v;
  }
  if (callable->type != value::kind::global)
    fail("REDUCE calls a " + type_name(*callable) + ", not a global");
  return apply_global(
      callable->text, *args, [this](value::kind k) { return keep(make(k)); },
      [this](const std::string& what) { fail(what); });
}

HOOKFORGE_INLINE value_ptr unpickler::persistent(const value_ptr& pid) {
  // ('storage', <storage type>, key, location, numel), as torch.save's persistent_id writes.
  const auto& t = pid->items;
  if (pid->type != value::kind::tuple || t.size() != 5 || t[0]->text != "storage" ||
      t[1]->type != value::kind::global || t[2]->type != value::kind::string ||
      t[4]->type != value::kind::integer)
    fail("a persistent id that is not ('storage', type, key, location, numel)");
  const auto dtype = storage_dtype(t[1]->text);
  if (dtype == c10::ScalarType::Undefined) fail(t[1]->text + " is not a storage type");
  if (t[4]->integer < 0) fail("storage '" + t[2]->text + "' has a negative size");
  auto ref = std::make_shared<storage_ref>();
  ref->key = t[2]->text;
  ref->dtype = dtype;
  ref->numel = t[4]->integer;
  ref->location = t[3]->text;
  auto v = make(value::kind::storage);
  v->storage = std::move(ref);
  return v;
}

}  // namespace hookforge::detail::pickle
