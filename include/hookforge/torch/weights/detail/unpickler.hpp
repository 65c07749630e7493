// hookforge/torch/weights/detail/unpickler.hpp — a restricted reader of Python pickles (the
// data.pkl of a torch.save archive) that never runs anything.
//
// Python's pickle calls whatever global a file names; torch.load(weights_only=True) instead
// builds only what an allow-list names. This reader goes further: it calls nothing at all.
// It knows what each allowed global means and builds that value itself:
//   tensors     torch._utils._rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
//               _rebuild_parameter, _rebuild_parameter_with_state,
//               torch._tensor._rebuild_from_type_v2 (of a Tensor or a Parameter)
//   storages    torch.FloatStorage and the other typed storages, torch.UntypedStorage (only
//               inside a persistent id), the dtypes (torch.float32, torch.uint16, ...)
//   containers  collections.OrderedDict, collections.Counter, builtins.set, frozenset,
//               bytearray, _codecs.encode (bytes), torch.Size, torch.device
// Globals listed as opaque (a checkpoint's NumPy arrays, MMEngine's HistoryBuffer, ...) may
// appear: what they would build becomes an opaque value that names them. Any other global
// is refused by name, with its byte offset, before anything else is read.
//
// Bounds: every length is checked against the bytes left, so nothing is allocated beyond
// what the pickle holds; there is no recursion while reading, and the arena empties every
// container at the end (see pickle_value.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/weights/detail/pickle_value.hpp"

namespace hookforge::detail::pickle {

/// Globals a checkpoint of the peers holds outside its weights: NumPy's arrays and scalars
/// (MMEngine's message hub, Lightning's callbacks), MMEngine's HistoryBuffer and ConfigDict,
/// Lightning's AttributeDict, argparse.Namespace, paths.
HOOKFORGE_INLINE const std::vector<std::string>& default_opaque_globals();

class unpickler {
 public:
  /// `source` names the pickle in messages ("'x.pth' (data.pkl)").
  unpickler(std::string_view data, std::string source, std::vector<std::string> opaque_globals);
  unpickler(const unpickler&) = delete;
  unpickler& operator=(const unpickler&) = delete;
  ~unpickler();

  /// The pickle's value. The values stay valid while this unpickler lives.
  value_ptr load();

  [[noreturn]] void fail(const std::string& what) const;

 private:
  bool step(std::uint8_t op);  // false at STOP
  bool scalar_op(std::uint8_t op);
  bool container_op(std::uint8_t op);
  bool memo_op(std::uint8_t op);
  bool object_op(std::uint8_t op);

  std::string_view take(std::size_t n);
  std::uint64_t little_endian(std::size_t n);
  std::string_view line();  // protocol 0's text arguments, up to '\n'

  value_ptr keep(value_ptr v);  // into the arena when a container
  void push(value_ptr v) { stack_.push_back(std::move(v)); }
  value_ptr pop();
  value_ptr& top();
  std::vector<value_ptr> pop_to_mark();
  value_ptr tuple_of(std::vector<value_ptr> items);

  value_ptr global(const std::string& module, const std::string& name);
  value_ptr call(const value_ptr& callable, const value_ptr& args);
  value_ptr persistent(const value_ptr& pid);

  std::string_view data_;
  std::size_t pos_ = 0, op_pos_ = 0;
  std::string source_;
  std::vector<std::string> opaque_;
  std::vector<value_ptr> stack_;
  std::vector<std::vector<value_ptr>> marks_;
  std::unordered_map<std::uint32_t, value_ptr> memo_;
  std::vector<value_ptr> arena_;
};

}  // namespace hookforge::detail::pickle

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/detail/unpickler-inl.hpp"
#endif
