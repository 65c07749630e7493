// hookforge/torch/weights/detail/pickle_globals-inl.hpp — the allow-list's definitions:
// included by pickle_globals.hpp header-only, compiled into hookforge::torch_compiled
// otherwise.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <c10/core/ScalarType.h>

#include "hookforge/torch/compat.hpp"

#include "hookforge/torch/weights/detail/pickle_globals.hpp"

namespace hookforge::detail::pickle {

namespace globals {

using c10::ScalarType;

// torch.save names a storage by its legacy class (torch/storage.py's
// _dtype_to_storage_type_map); dtypes it added later go as an UntypedStorage of bytes.
inline constexpr std::array<std::pair<std::string_view, ScalarType>, 14> storages{{
    {"torch.DoubleStorage", ScalarType::Double},
    {"torch.FloatStorage", ScalarType::Float},
    {"torch.HalfStorage", ScalarType::Half},
    {"torch.LongStorage", ScalarType::Long},
    {"torch.IntStorage", ScalarType::Int},
    {"torch.ShortStorage", ScalarType::Short},
    {"torch.CharStorage", ScalarType::Char},
    {"torch.ByteStorage", ScalarType::Byte},
    {"torch.BoolStorage", ScalarType::Bool},
    {"torch.BFloat16Storage", ScalarType::BFloat16},
    {"torch.ComplexDoubleStorage", ScalarType::ComplexDouble},
    {"torch.ComplexFloatStorage", ScalarType::ComplexFloat},
    {"torch.UntypedStorage", ScalarType::Byte},
    {"torch.storage.UntypedStorage", ScalarType::Byte},
}};

// The dtypes a pickle names as globals (torch.float32 pickles as the global torch.float32):
// _rebuild_tensor_v3's, for the dtypes saved as bytes. Those this LibTorch lacks are absent,
// so a file holding one is refused by the dtype's name.
inline const std::vector<std::pair<std::string_view, ScalarType>>& dtypes() {
  static const std::vector<std::pair<std::string_view, ScalarType>> table{
      {"torch.float64", ScalarType::Double},
      {"torch.float32", ScalarType::Float},
      {"torch.float16", ScalarType::Half},
      {"torch.bfloat16", ScalarType::BFloat16},
      {"torch.int64", ScalarType::Long},
      {"torch.int32", ScalarType::Int},
      {"torch.int16", ScalarType::Short},
      {"torch.int8", ScalarType::Char},
      {"torch.uint8", ScalarType::Byte},
      {"torch.bool", ScalarType::Bool},
      {"torch.complex64", ScalarType::ComplexFloat},
      {"torch.complex128", ScalarType::ComplexDouble},
#if HOOKFORGE_HAS_UNSIGNED_DTYPES
      {"torch.uint16", ScalarType::UInt16},
      {"torch.uint32", ScalarType::UInt32},
      {"torch.uint64", ScalarType::UInt64},
      {"torch.float8_e4m3fn", ScalarType::Float8_e4m3fn},
      {"torch.float8_e5m2", ScalarType::Float8_e5m2},
      {"torch.float8_e4m3fnuz", ScalarType::Float8_e4m3fnuz},
      {"torch.float8_e5m2fnuz", ScalarType::Float8_e5m2fnuz},
#endif
#if HOOKFORGE_HAS_MICROSCALING_DTYPES
      {"torch.float8_e8m0fnu", ScalarType::Float8_e8m0fnu},
      {"torch.float4_e2m1fn_x2", ScalarType::Float4_e2m1fn_x2},
#endif
  };
  return table;
}

// Every dtype PyTorch names that this LibTorch may lack: a tensor of one is read as such and
// refused by its dtype's name only if it is among the weights taken.
inline constexpr std::array<std::string_view, 11> later_dtypes{
    "torch.uint16",          "torch.uint32",         "torch.uint64",
    "torch.float8_e4m3fn",   "torch.float8_e5m2",    "torch.float8_e4m3fnuz",
    "torch.float8_e5m2fnuz", "torch.float8_e8m0fnu", "torch.float4_e2m1fn_x2",
    "torch.complex32",       "torch.bits8"};

// Globals that build a value here; the storages and dtypes above are allowed too.
inline constexpr std::array<std::string_view, 17> functions{
    "torch._utils._rebuild_tensor",
    "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_parameter",
    "torch._utils._rebuild_parameter_with_state",
    "torch._tensor._rebuild_from_type_v2",
    "torch.Tensor",
    "torch.nn.parameter.Parameter",
    "collections.OrderedDict",
    "collections.Counter",
    "builtins.set",
    "builtins.frozenset",
    "builtins.bytearray",
    "_codecs.encode",
    "torch.Size",
    "torch.device",
    "builtins.object"};

template <class Table>
ScalarType find(const Table& table, std::string_view name) {
  for (const auto& [key, type] : table)
    if (key == name) return type;
  return ScalarType::Undefined;
}

inline const value& arg(const value& args, std::size_t i, const failure& fail,
                        const std::string& name) {
  if (args.type != value::kind::tuple || args.items.size() <= i)
    fail(name + " expects at least " + std::to_string(i + 1) + " arguments");
  return *args.items[i];
}

inline std::int64_t integer(const value& v, const failure& fail, const char* what) {
  if (v.type != value::kind::integer)
    fail(std::string(what) + " is a " + type_name(v) + ", not an int");
  return v.integer;
}

inline std::vector<std::int64_t> integers(const value& v, const failure& fail, const char* what) {
  if (v.type != value::kind::tuple && v.type != value::kind::list)
    fail(std::string(what) + " is a " + type_name(v) + ", not a tuple of ints");
  std::vector<std::int64_t> out;
  for (const auto& item : v.items) {
    out.push_back(integer(*item, fail, what));
    if (out.back() < 0)
      fail(std::string(what) + " holds the negative " + std::to_string(out.back()));
  }
  return out;
}

// The tensor a rebuild function's first argument (or a Parameter's data) must be.
inline value_ptr tensor_arg(const value& args, const failure& fail, const std::string& name) {
  const value& data = arg(args, 0, fail, name);
  if (data.type != value::kind::tensor) fail(name + " expects a tensor, got a " + type_name(data));
  return std::make_shared<value>(data);
}

}  // namespace globals

HOOKFORGE_INLINE bool allowed_global(std::string_view name) {
  for (auto f : globals::functions)
    if (f == name) return true;
  return storage_dtype(name) != c10::ScalarType::Undefined || names_dtype(name);
}

HOOKFORGE_INLINE c10::ScalarType storage_dtype(std::string_view name) {
  return globals::find(globals::storages, name);
}

HOOKFORGE_INLINE bool names_dtype(std::string_view name) {
  for (auto later : globals::later_dtypes)
    if (later == name) return true;
  return dtype_global(name) != c10::ScalarType::Undefined;
}

HOOKFORGE_INLINE c10::ScalarType dtype_global(std::string_view name) {
  return globals::find(globals::dtypes(), name);
}

HOOKFORGE_INLINE value_ptr rebuild_tensor(const value& storage, const value& offset,
                                          const value& sizes, const value& strides,
                                          c10::ScalarType dtype, const failure& fail) {
  if (storage.type != value::kind::storage)
    fail("a tensor's storage is a " + type_name(storage) + ", not a storage");
  auto recipe = std::make_shared<tensor_recipe>();
  recipe->storage = storage.storage;
  recipe->dtype = dtype;
  recipe->offset = globals::integer(offset, fail, "a tensor's storage offset");
  recipe->sizes = globals::integers(sizes, fail, "a tensor's size");
  recipe->strides = globals::integers(strides, fail, "a tensor's stride");
  if (recipe->offset < 0) fail("a tensor's storage offset is negative");
  if (recipe->sizes.size() != recipe->strides.size())
    fail("a tensor's size and stride differ in length");
  // The last element's index, in elements of dtype, must lie inside the storage.
  const auto item = static_cast<std::int64_t>(c10::elementSize(dtype));
  const auto storage_item = static_cast<std::int64_t>(c10::elementSize(storage.storage->dtype));
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(storage.storage->numel, storage_item, &bytes))
    fail("storage '" + storage.storage->key + "' claims more bytes than 64 bits count");
  const std::int64_t capacity = bytes / item;
  bool empty = false;
  std::int64_t last = recipe->offset;
  for (std::size_t d = 0; d < recipe->sizes.size(); ++d) {
    if (recipe->sizes[d] == 0) empty = true;
    std::int64_t reach = 0;
    if (recipe->sizes[d] > 0 &&
        (__builtin_mul_overflow(recipe->sizes[d] - 1, recipe->strides[d], &reach) ||
         __builtin_add_overflow(last, reach, &last)))
      fail("a tensor's size and stride overflow");
  }
  if (empty ? recipe->offset > capacity : last >= capacity)
    fail("a tensor of storage '" + storage.storage->key + "' reaches element " +
         std::to_string(last) + ", past the storage's " + std::to_string(capacity));
  auto out = std::make_shared<value>();
  out->type = value::kind::tensor;
  out->tensor = std::move(recipe);
  return out;
}

HOOKFORGE_INLINE value_ptr apply_global(const std::string& name, const value& args,
                                        const std::function<value_ptr(value::kind)>& make,
                                        const failure& fail) {
  using globals::arg;
  using kind = value::kind;
  if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
    const value& storage = arg(args, 0, fail, name);
    const auto dtype =
        storage.type == kind::storage ? storage.storage->dtype : c10::ScalarType::Undefined;
    return rebuild_tensor(storage, arg(args, 1, fail, name), arg(args, 2, fail, name),
                          arg(args, 3, fail, name), dtype, fail);
  }
  if (name == "torch._utils._rebuild_tensor_v3") {
    const value& dtype = arg(args, 6, fail, name);
    if (dtype.type != kind::dtype) fail(name + "'s dtype is a " + type_name(dtype));
    if (dtype.dtype == c10::ScalarType::Undefined) {  // one this LibTorch lacks
      auto out = make(kind::object);
      out->text = dtype.text;
      out->flag = true;  // a tensor, of that dtype
      return out;
    }
    return rebuild_tensor(arg(args, 0, fail, name), arg(args, 1, fail, name),
                          arg(args, 2, fail, name), arg(args, 3, fail, name), dtype.dtype, fail);
  }
  if (name == "torch._utils._rebuild_parameter" ||
      name == "torch._utils._rebuild_parameter_with_state")
    return globals::tensor_arg(args, fail, name);
  if (name == "torch._tensor._rebuild_from_type_v2") {
    // (func, type, args, state): func rebuilds the tensor, type is Tensor or Parameter.
    const value& func = arg(args, 0, fail, name);
    const value& type = arg(args, 1, fail, name);
    if (func.type != kind::global || type.type != kind::global ||
        (type.text != "torch.Tensor" && type.text != "torch.nn.parameter.Parameter"))
      fail(name + " of a " + type_name(type) + " (only a Tensor or a Parameter is read)");
    return apply_global(func.text, arg(args, 2, fail, name), make, fail);
  }
  if (name == "collections.OrderedDict" || name == "collections.Counter") return make(kind::dict);
  if (name == "builtins.set" || name == "builtins.frozenset") {
    auto out = make(kind::list);
    if (args.type == kind::tuple && !args.items.empty() && args.items[0]->is_container())
      out->items = args.items[0]->items;
    return out;
  }
  if (name == "torch.Size") {
    auto out = make(kind::tuple);
    if (args.type == kind::tuple && !args.items.empty()) out->items = args.items[0]->items;
    return out;
  }
  // Bytes keep the text they were pickled as (protocol 2 writes bytes as _codecs.encode of a
  // latin-1 str): no weight is read from them, they only have to be skipped.
  if (name == "_codecs.encode" || name == "builtins.bytearray" || name == "torch.device") {
    auto out = std::make_shared<value>();
    out->type = name == "torch.device" ? kind::string : kind::bytes;
    if (args.type == kind::tuple && !args.items.empty()) out->text = args.items[0]->text;
    return out;
  }
  fail("the global " + name + " is not called with arguments here");
  return nullptr;
}

}  // namespace hookforge::detail::pickle
