// hookforge/torch/weights/detail/pickler-inl.hpp — the state_dict pickler's definitions:
// included by pickler.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <ATen/ATen.h>

#include "hookforge/torch/weights/detail/pickle_globals.hpp"
#include "hookforge/torch/weights/detail/pickler.hpp"

namespace hookforge::detail::pickle {

namespace writing {

// Protocol 2's opcodes, written into one string.
class pickle_out {
 public:
  void op(char code) { out_ += code; }
  void raw_le(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void string(std::string_view s) {  // BINUNICODE
    op('X');
    raw_le(s.size(), 4);
    out_ += s;
  }
  void integer(std::int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {  // BININT
      op('J');
      raw_le(static_cast<std::uint32_t>(v), 4);
    } else {  // LONG1 of 8 bytes, two's complement
      op('\x8a');
      raw_le(8, 1);
      raw_le(static_cast<std::uint64_t>(v), 8);
    }
  }
  void global(std::string_view dotted) {  // GLOBAL 'module\nname\n'
    const auto dot = dotted.rfind('.');
    op('c');
    out_ += dotted.substr(0, dot);
    out_ += '\n';
    out_ += dotted.substr(dot + 1);
    out_ += '\n';
  }
  void ints(c10::IntArrayRef values) {  // a tuple of ints
    op('(');
    for (auto v : values) integer(v);
    op('t');
  }
  void empty_ordered_dict() {
    global("collections.OrderedDict");
    op(')');
    op('R');
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// torch.<Type>Storage for a dtype: the legacy class torch.save names.
inline std::string_view storage_class(c10::ScalarType dtype) {
  for (const auto& [name, type] : globals::storages)
    if (type == dtype && !name.ends_with("UntypedStorage")) return name;
  return {};
}

// The storage of `t` on the CPU, whole (a view's base storage, not only the view's elements).
inline c10::Storage cpu_storage(const at::Tensor& t) {
  if (t.device().is_cpu()) return t.storage();
  auto whole = at::empty({0}, t.options()).set_(t.storage());
  return whole.cpu().storage();
}

}  // namespace writing

HOOKFORGE_INLINE state_dict_contents state_dict_pickle(const named_tensors& tensors) {
  writing::pickle_out out;
  state_dict_contents contents;
  std::map<std::pair<const void*, c10::ScalarType>, std::string> keys;  // storage -> key
  std::set<std::string> names;
  out.op('\x80');  // PROTO 2
  out.raw_le(2, 1);
  out.empty_ordered_dict();
  out.op('(');  // MARK, then key, value, ..., SETITEMS
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) throw std::invalid_argument("tensor '" + name + "' is undefined");
    if (!names.insert(name).second)
      throw std::invalid_argument("tensor '" + name + "' is given twice");
    const auto dtype = tensor.scalar_type();
    const auto type = writing::storage_class(dtype);
    if (type.empty())
      throw std::invalid_argument("tensor '" + name + "' is " + std::string(c10::toString(dtype)) +
                                  ", which a .pth stores only in PyTorch's newer layout; write "
                                  "it as safetensors");
    const std::pair<const void*, c10::ScalarType> id{tensor.storage().unsafeGetStorageImpl(),
                                                     dtype};
    auto [found, added] = keys.emplace(id, std::to_string(keys.size()));
    const auto& key = found->second;
    const auto item = static_cast<std::int64_t>(c10::elementSize(dtype));
    if (added) contents.storages.emplace_back(key, writing::cpu_storage(tensor));
    const auto numel = static_cast<std::int64_t>(tensor.storage().nbytes()) / item;

    out.string(name);
    out.global("torch._utils._rebuild_tensor_v2");
    out.op('(');
    out.op('(');  // the persistent id
    out.string("storage");
    out.global(type);
    out.string(key);
    out.string("cpu");
    out.integer(numel);
    out.op('t');
    out.op('Q');  // BINPERSID
    out.integer(tensor.storage_offset());
    out.ints(tensor.sizes());
    out.ints(tensor.strides());
    out.op('\x89');            // requires_grad: NEWFALSE
    out.empty_ordered_dict();  // backward hooks
    out.op('t');
    out.op('R');
  }
  out.op('u');  // SETITEMS
  out.op('.');
  contents.pickle = out.take();
  return contents;
}

}  // namespace hookforge::detail::pickle
