// hookforge/torch/data/entry.hpp — a batch as named tensors, and "a model is anything
// callable on an Entry".
//
//   hookforge::Entry batch{{"input", x}, {"target", y}};
//   hookforge::forward_into(model, batch);   // adds "output" (and whatever else the model returns)
//   auto loss = criterion(batch.at("output"), batch.at("target"));
//
// The batch size is the first dimension shared by every batch-major field; fields that
// disagree are an error (the runners weigh scores by it). A field without a batch
// dimension (a mask shared by the batch, a lookup table) is marked when set:
//   batch.set("palette", colours, hookforge::not_batched);
// 0-dimensional and undefined tensors have no batch dimension and are never counted.
//
// Fields keep INSERTION order (a batch has a handful of fields, so lookup is a linear
// scan with no allocation; iteration order is the order fields were added). Names are
// unique. Iterating yields `std::pair<const std::string, torch::Tensor>&`, as std::map:
//   for (auto& [name, t] : batch) t = t.pin_memory();
//
// A model is one of (checked in this order by `call_model`):
//   (a) a module holder / pointer whose `forward(const Entry&)` or `forward(Entry)`
//       returns an Entry or a Tensor (`model->forward(e)`), or an object with such a
//       `forward` member (`model.forward(e)`);
//   (b) a callable Entry -> Entry;
//   (c) a callable Entry -> Tensor; the tensor becomes the "output" field.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

/// Tag for Entry::set: the field has no batch dimension, so batch_size() ignores it.
struct not_batched_t {
  explicit not_batched_t() = default;
};
inline constexpr not_batched_t not_batched{};

class Entry {
 public:
  using value_type = std::pair<const std::string, torch::Tensor>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  Entry() = default;
  // Throws std::invalid_argument when a name appears twice.
  Entry(std::initializer_list<std::pair<std::string, torch::Tensor>> fields);
  Entry(const Entry&);
  Entry(Entry&&) noexcept = default;
  /// A copy with room for `extra` more fields, so that adding them (the model's output)
  /// does not reallocate: the runners copy each batch from the loader this way.
  Entry(const Entry& other, std::size_t extra);
  // By value then swap: the stored pairs have const names and are not assignable.
  Entry& operator=(Entry other) noexcept;
  ~Entry();

  // As std::map: a missing name is added (holding an undefined tensor) at the end.
  torch::Tensor& operator[](std::string_view name);

  // Throws std::out_of_range naming the missing field and the fields present.
  torch::Tensor& at(std::string_view name);
  const torch::Tensor& at(std::string_view name) const;

  bool contains(std::string_view name) const;

  // Overwrites the field in place (keeping its position) or appends it, as a batch-major
  // field; with `not_batched`, as a field without a batch dimension.
  Entry& set(std::string_view name, torch::Tensor tensor);
  Entry& set(std::string_view name, torch::Tensor tensor, not_batched_t);

  // False for a field set with `not_batched` (and for a missing one).
  bool is_batched(std::string_view name) const;

  // Removes the field; returns whether it was there.
  bool erase(std::string_view name);

  iterator find(std::string_view name);
  const_iterator find(std::string_view name) const;

  // Adds the fields of `output` (typically the model's), overwriting same-named ones in
  // place, so postprocessors and the loss see every field in one Entry. Each field keeps
  // the `not_batched` mark it has in `output`.
  void merge(const Entry& output);
  void merge(Entry&& output);

  // A copy with every defined tensor moved to `device` (dtype kept); undefined tensors
  // stay undefined. Tensors already on `device` are shared, not copied.
  Entry to(torch::Device device, bool non_blocking = false) const;

  // The first dimension of the batch-major fields: every defined field of one or more
  // dimensions not marked `not_batched`. Throws std::logic_error when there is no such
  // field, or when they disagree (naming each field and its size), whatever their order.
  std::size_t batch_size() const;

  std::vector<std::string> names() const;

  std::size_t size() const noexcept { return fields_.size(); }
  bool empty() const noexcept { return fields_.empty(); }

  iterator begin() noexcept { return fields_.begin(); }
  iterator end() noexcept { return fields_.end(); }
  const_iterator begin() const noexcept { return fields_.begin(); }
  const_iterator end() const noexcept { return fields_.end(); }
  const_iterator cbegin() const noexcept { return fields_.cbegin(); }
  const_iterator cend() const noexcept { return fields_.cend(); }

 private:
  [[noreturn]] void throw_missing(std::string_view name) const;

  bool marked_not_batched(std::string_view name) const;
  void mark_batched(std::string_view name, bool batched);
  bool counts_for_batch(const value_type& field) const;

  // "[input: 8, target: 5, mask: not batched]", over the fields `pick` selects.
  template <class Pick>
  std::string describe(Pick pick) const;

  std::vector<value_type> fields_;
  std::vector<std::string> not_batched_;  // names of the fields set with `not_batched`
};

namespace detail {

template <class R>
concept entry_result = std::convertible_to<R, Entry> || std::convertible_to<R, torch::Tensor>;

template <class M>
concept forward_through_pointer = requires(M& m, const Entry& e) {
  { m->forward(e) } -> entry_result;
};

template <class M>
concept forward_member = requires(M& m, const Entry& e) {
  { m.forward(e) } -> entry_result;
};

// ModuleHolder::operator() is not SFINAE-friendly (asking whether a Linear is invocable
// with an Entry is a hard error), so holders are only ever called through `->forward`.
template <class M>
concept module_holder = requires { typename M::ContainedType; } &&
                        std::derived_from<M, torch::nn::ModuleHolder<typename M::ContainedType>>;

template <class M>
concept entry_callable = !module_holder<M> && std::invocable<M&, const Entry&> &&
                         entry_result<std::invoke_result_t<M&, const Entry&>>;

template <class R>
Entry as_entry(R&& result) {
  if constexpr (std::convertible_to<R, Entry>)
    return Entry(std::forward<R>(result));
  else
    return Entry{{"output", torch::Tensor(std::forward<R>(result))}};
}

}  // namespace detail

// Anything `call_model` accepts: see the top of this file.
template <class M>
concept entry_model =
    detail::forward_through_pointer<M> || detail::forward_member<M> || detail::entry_callable<M>;

// Runs the model on `batch` and merges its output into it (as batch.merge(call_model(model,
// batch)), without building an Entry for a model that returns one tensor).
template <class M>
void forward_into(M& model, Entry& batch);

// Runs the model on `in` and returns its output as an Entry (not merged into `in`).
// Unconstrained, so that a model of the wrong shape gets this one message rather than
// "no matching function for call to call_model" from inside a runner.
template <class M>
Entry call_model(M& model, const Entry& in) {
  static_assert(
      entry_model<M>,
      "hookforge: the model must take the batch as an Entry: give it "
      "`forward(const hookforge::Entry&)` returning a Tensor or an Entry (a module that picks "
      "its input field). A callable on an Entry also runs, but hides the module: a Trainer "
      "then saves none of its weights and cannot put it in eval() mode");
  if constexpr (!entry_model<M>)
    return {};
  else if constexpr (detail::forward_through_pointer<M>)
    return detail::as_entry(model->forward(in));
  else if constexpr (detail::forward_member<M>)
    return detail::as_entry(model.forward(in));
  else
    return detail::as_entry(std::invoke(model, in));
}

namespace detail {
template <class R>
void merge_result(Entry& batch, R&& result) {
  if constexpr (std::convertible_to<R, Entry>)
    batch.merge(Entry(std::forward<R>(result)));
  else
    batch.set("output", torch::Tensor(std::forward<R>(result)));
}
}  // namespace detail

template <class M>
void forward_into(M& model, Entry& batch) {
  if constexpr (!entry_model<M>)
    batch.merge(call_model(model, batch));  // call_model's static_assert names the mistake
  else if constexpr (detail::forward_through_pointer<M>)
    detail::merge_result(batch, model->forward(std::as_const(batch)));
  else if constexpr (detail::forward_member<M>)
    detail::merge_result(batch, model.forward(std::as_const(batch)));
  else
    detail::merge_result(batch, std::invoke(model, std::as_const(batch)));
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/entry-inl.hpp"
#endif
