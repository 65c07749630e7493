// hookforge/torch/weights/detail/unpickler-inl.hpp — the restricted unpickler's definitions:
// included by unpickler.hpp header-only, compiled into hookforge::torch_compiled otherwise.
//
// The opcodes are those of pickle protocols 0 to 5 that data can be made of (Python's
// Lib/pickletools.py documents each); INST, OBJ, the extension registry and the text
// persistent id are refused, as Python's weights_only unpickler refuses them.
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

namespace hookforge::detail::pickle {

namespace op {
enum : std::uint8_t {
  mark = '(',
  stop = '.',
  pop = '0',
  pop_mark = '1',
  dup = '2',
  none = 'N',
  int_text = 'I',
  binint = 'J',
  binint1 = 'K',
  binint2 = 'M',
  binfloat = 'G',
  binunicode = 'X',
  binstring = 'T',
  short_binstring = 'U',
  binbytes = 'B',
  short_binbytes = 'C',
  empty_list = ']',
  append = 'a',
  appends = 'e',
  list = 'l',
  empty_tuple = ')',
  tuple = 't',
  empty_dict = '}',
  dict = 'd',
  setitem = 's',
  setitems = 'u',
  global = 'c',
  reduce = 'R',
  build = 'b',
  binpersid = 'Q',
  put = 'p',
  binput = 'q',
  long_binput = 'r',
  get = 'g',
  binget = 'h',
  long_binget = 'j',
  proto = 0x80,
  newobj = 0x81,
  tuple1 = 0x85,
  tuple2 = 0x86,
  tuple3 = 0x87,
  newtrue = 0x88,
  newfalse = 0x89,
  long1 = 0x8a,
  long4 = 0x8b,
  short_binunicode = 0x8c,
  binunicode8 = 0x8d,
  binbytes8 = 0x8e,
  empty_set = 0x8f,
  additems = 0x90,
  frozenset = 0x91,
  newobj_ex = 0x92,
  stack_global = 0x93,
  memoize = 0x94,
  frame = 0x95,
  bytearray8 = 0x96
};
}  // namespace op

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

HOOKFORGE_INLINE bool unpickler::step(std::uint8_t code) {
  if (code == op::stop) return false;
  if (scalar_op(code) || container_op(code) || memo_op(code) || object_op(code)) return true;
  static constexpr char hex[] = "0123456789abcdef";
  fail(std::string("opcode 0x") + hex[code >> 4] + hex[code & 15] +
       " is not one data is made of (refused, as Python's weights_only refuses it)");
}

HOOKFORGE_INLINE bool unpickler::scalar_op(std::uint8_t code) {
  using kind = value::kind;
  auto scalar = [&](kind type) { return std::make_shared<value>(value{.type = type}); };
  auto text = [&](kind type, std::size_t length) {
    auto v = scalar(type);
    v->text = take(length);
    push(v);
  };
  auto integer = [&](std::int64_t i) {
    auto v = scalar(kind::integer);
    v->integer = i;
    push(v);
  };
  switch (code) {
    case op::proto:
      take(1);
      return true;
    case op::frame:
      take(8);
      return true;  // frames only group opcodes
    case op::none:
      push(scalar(kind::none));
      return true;
    case op::newtrue:
    case op::newfalse: {
      auto v = scalar(kind::boolean);
      v->flag = code == op::newtrue;
      push(v);
      return true;
    }
    case op::binint:
      integer(static_cast<std::int32_t>(little_endian(4)));
      return true;
    case op::binint1:
      integer(static_cast<std::int64_t>(little_endian(1)));
      return true;
    case op::binint2:
      integer(static_cast<std::int64_t>(little_endian(2)));
      return true;
    case op::long1:
    case op::long4: {
      const auto n = little_endian(code == op::long1 ? 1 : 4);
      if (n > 8) fail("an int of " + std::to_string(n) + " bytes does not fit 64 bits");
      auto raw = little_endian(n);
      if (n > 0 && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~std::uint64_t{0} << (8 * n);
      integer(static_cast<std::int64_t>(raw));
      return true;
    }
    case op::int_text: {
      const auto digits = std::string(line());
      if (digits == "01" || digits == "00") {
        auto v = scalar(kind::boolean);
        v->flag = digits == "01";
        push(v);
      } else {
        integer(std::strtoll(digits.c_str(), nullptr, 10));
      }
      return true;
    }
    case op::binfloat: {  // big-endian IEEE 754 double
      const auto bytes = take(8);
      std::uint64_t raw = 0;
      for (char c : bytes) raw = (raw << 8) | static_cast<std::uint8_t>(c);
      auto v = scalar(kind::floating);
      std::memcpy(&v->floating, &raw, 8);
      push(v);
      return true;
    }
    case op::binunicode:
      text(kind::string, little_endian(4));
      return true;
    case op::short_binunicode:
      text(kind::string, little_endian(1));
      return true;
    case op::binunicode8:
      text(kind::string, little_endian(8));
      return true;
    case op::binstring:
      text(kind::string, little_endian(4));
      return true;
    case op::short_binstring:
      text(kind::string, little_endian(1));
      return true;
    case op::binbytes:
      text(kind::bytes, little_endian(4));
      return true;
    case op::short_binbytes:
      text(kind::bytes, little_endian(1));
      return true;
    case op::binbytes8:
    case op::bytearray8:
      text(kind::bytes, little_endian(8));
      return true;
    default:
      return false;
  }
}

HOOKFORGE_INLINE bool unpickler::container_op(std::uint8_t code) {
  using kind = value::kind;
  auto extend = [&](value& into, std::vector<value_ptr> items) {
    if (into.type != kind::list) fail("APPENDS into a " + type_name(into) + ", not a list");
    into.items.insert(into.items.end(), items.begin(), items.end());
  };
  auto set_items = [&](value& into, std::vector<value_ptr> items) {
    if (into.type == kind::object) return;  // an opaque object's state: not kept
    if (into.type != kind::dict) fail("SETITEMS into a " + type_name(into) + ", not a dict");
    if (items.size() % 2 != 0) fail("SETITEMS with a key and no value");
    into.items.insert(into.items.end(), items.begin(), items.end());
  };
  switch (code) {
    case op::mark:
      marks_.push_back(std::move(stack_));
      stack_.clear();
      return true;
    case op::pop:
      pop();
      return true;
    case op::pop_mark:
      pop_to_mark();
      return true;
    case op::dup:
      push(top());
      return true;
    case op::empty_list:
      push(keep(make(kind::list)));
      return true;
    case op::empty_set:
      push(keep(make(kind::list)));
      return true;
    case op::empty_dict:
      push(keep(make(kind::dict)));
      return true;
    case op::empty_tuple:
      push(tuple_of({}));
      return true;
    case op::list:
    case op::frozenset: {
      auto l = keep(make(kind::list));
      l->items = pop_to_mark();
      push(l);
      return true;
    }
    case op::tuple:
      push(tuple_of(pop_to_mark()));
      return true;
    case op::tuple1:
    case op::tuple2:
    case op::tuple3: {
      std::vector<value_ptr> items(code - op::tuple1 + 1);
      for (auto i = items.size(); i-- > 0;) items[i] = pop();
      push(tuple_of(std::move(items)));
      return true;
    }
    case op::dict: {
      auto d = keep(make(kind::dict));
      set_items(*d, pop_to_mark());
      push(d);
      return true;
    }
    case op::append: {
      auto item = pop();
      extend(*top(), {std::move(item)});
      return true;
    }
    case op::appends:
    case op::additems: {
      auto items = pop_to_mark();
      extend(*top(), std::move(items));
      return true;
    }
    case op::setitem: {
      auto v = pop();
      auto k = pop();
      set_items(*top(), {std::move(k), std::move(v)});
      return true;
    }
    case op::setitems: {
      auto items = pop_to_mark();
      set_items(*top(), std::move(items));
      return true;
    }
    default:
      return false;
  }
}

HOOKFORGE_INLINE bool unpickler::memo_op(std::uint8_t code) {
  auto get = [&](std::uint64_t index) {
    const auto found = memo_.find(static_cast<std::uint32_t>(index));
    if (index > UINT32_MAX || found == memo_.end())
      fail("the memo has no entry " + std::to_string(index));
    push(found->second);
  };
  switch (code) {
    case op::put:
      memo_[static_cast<std::uint32_t>(std::strtoul(std::string(line()).c_str(), nullptr, 10))] =
          top();
      return true;
    case op::binput:
      memo_[static_cast<std::uint32_t>(little_endian(1))] = top();
      return true;
    case op::long_binput:
      memo_[static_cast<std::uint32_t>(little_endian(4))] = top();
      return true;
    case op::memoize:
      memo_[static_cast<std::uint32_t>(memo_.size())] = top();
      return true;
    case op::get:
      get(std::strtoull(std::string(line()).c_str(), nullptr, 10));
      return true;
    case op::binget:
      get(little_endian(1));
      return true;
    case op::long_binget:
      get(little_endian(4));
      return true;
    default:
      return false;
  }
}

HOOKFORGE_INLINE bool unpickler::object_op(std::uint8_t code) {
  switch (code) {
    case op::global: {
      const auto module = std::string(line());
      push(global(module, std::string(line())));
      return true;
    }
    case op::stack_global: {
      auto name = pop();
      auto module = pop();
      if (module->type != value::kind::string || name->type != value::kind::string)
        fail("STACK_GLOBAL of a " + type_name(*module) + " and a " + type_name(*name));
      push(global(module->text, name->text));
      return true;
    }
    case op::reduce:
    case op::newobj: {
      auto args = pop();
      auto callable = pop();
      push(call(callable, args));
      return true;
    }
    case op::newobj_ex: {
      pop();  // kwargs
      auto args = pop();
      auto callable = pop();
      push(call(callable, args));
      return true;
    }
    case op::build: {
      pop();  // the state of an OrderedDict (its _metadata) or an opaque object: not kept
      const auto type = top()->type;
      if (type != value::kind::dict && type != value::kind::object && type != value::kind::tensor)
        fail("BUILD of a " + type_name(*top()));
      return true;
    }
    case op::binpersid:
      push(persistent(pop()));
      return true;
    default:
      return false;
  }
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
