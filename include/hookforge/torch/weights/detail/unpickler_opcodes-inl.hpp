// hookforge/torch/weights/detail/unpickler_opcodes-inl.hpp — the restricted unpickler's
// opcodes (unpickler.hpp): those of pickle protocols 0 to 5 that data can be made of (Python's
// Lib/pickletools.py documents each); INST, OBJ, the extension registry and the text
// persistent id are refused, as Python's weights_only unpickler refuses them. Included by
// unpickler-inl.hpp.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace hookforge::detail::pickle
