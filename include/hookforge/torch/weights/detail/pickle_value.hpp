// hookforge/torch/weights/detail/pickle_value.hpp — what the restricted unpickler builds: a
// small tree of Python values, with tensors kept as recipes until they are asked for.
//
// Containers are shared (a pickle's memo refers to one list from several places, and
// mutates it after memoising it), so values are held by shared_ptr. A pickle can also make
// cycles and chains millions deep; the unpickler owns every container it made (its arena)
// and empties them all when it is done, so no value is ever destroyed recursively.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/ScalarType.h>

namespace hookforge::detail::pickle {

/// A storage named by a persistent id: ('storage', <type>, key, location, numel).
struct storage_ref {
  std::string key;        ///< the record "data/<key>" of the archive
  c10::ScalarType dtype;  ///< of its elements (uint8 for an UntypedStorage)
  std::int64_t numel = 0;
  std::string location;  ///< "cpu", "cuda:0", ...: where it was; it is read onto the CPU
};

/// A tensor as _rebuild_tensor_v2/v3 describe it, checked to lie inside its storage.
struct tensor_recipe {
  std::shared_ptr<const storage_ref> storage;
  c10::ScalarType dtype;    ///< the tensor's (v3 may view bytes as another dtype)
  std::int64_t offset = 0;  ///< in elements of dtype
  std::vector<std::int64_t> sizes, strides;
};

struct value;
using value_ptr = std::shared_ptr<value>;

struct value {
  enum class kind {
    none,
    boolean,
    integer,
    floating,
    string,
    bytes,
    list,
    tuple,
    dict,    // items; a dict's are key, value, key, value, ...
    global,  // a global the allow-list lets the pickle name: text is "module.name"
    object,  // an opaque global's result: text names the global, nothing ran
    storage,
    tensor,
    dtype
  };
  kind type = kind::none;
  bool flag = false;  // boolean
  std::int64_t integer = 0;
  double floating = 0;
  std::string text = {};  // string, bytes, global, object
  std::vector<value_ptr> items = {};
  std::shared_ptr<const storage_ref> storage = {};
  std::shared_ptr<const tensor_recipe> tensor = {};
  c10::ScalarType dtype = c10::ScalarType::Undefined;

  bool is_container() const {
    return type == kind::list || type == kind::tuple || type == kind::dict;
  }
};

inline value_ptr make(value::kind type) {
  auto v = std::make_shared<value>();
  v->type = type;
  return v;
}

/// "dict", "tensor", "numpy.ndarray" (an object names its global): for messages.
inline std::string type_name(const value& v) {
  switch (v.type) {
    case value::kind::none:
      return "None";
    case value::kind::boolean:
      return "bool";
    case value::kind::integer:
      return "int";
    case value::kind::floating:
      return "float";
    case value::kind::string:
      return "str";
    case value::kind::bytes:
      return "bytes";
    case value::kind::list:
      return "list";
    case value::kind::tuple:
      return "tuple";
    case value::kind::dict:
      return "dict";
    case value::kind::global:
      return "the global " + v.text;
    case value::kind::object:
      return v.text;
    case value::kind::storage:
      return "storage";
    case value::kind::tensor:
      return "tensor";
    case value::kind::dtype:
      return "dtype";
  }
  return "value";
}

}  // namespace hookforge::detail::pickle
