// hookforge/torch/data/entry-inl.hpp — Entry's definitions: included by entry.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

template <class Pick>
std::string Entry::describe(Pick pick) const {
  std::string out = "[";
  for (const auto& field : fields_) {
    if (!pick(field)) continue;
    const auto& [name, tensor] = field;
    out += (out.size() > 1 ? ", " : "") + name + ": ";
    if (marked_not_batched(name))
      out += "not batched";
    else if (!tensor.defined())
      out += "undefined";
    else if (tensor.dim() == 0)
      out += "0-dimensional";
    else
      out += std::to_string(tensor.size(0));
  }
  return out + "]";
}

// Copying and destroying are out of line too: their vector code is the bulk of an Entry's.
HOOKFORGE_INLINE Entry::Entry(const Entry&) = default;

HOOKFORGE_INLINE Entry::Entry(const Entry& other, std::size_t extra)
    : not_batched_(other.not_batched_) {
  fields_.reserve(other.fields_.size() + extra);
  for (const auto& field : other.fields_) fields_.push_back(field);
}

HOOKFORGE_INLINE Entry::~Entry() = default;

HOOKFORGE_INLINE Entry& Entry::operator=(Entry other) noexcept {
  fields_.swap(other.fields_);
  not_batched_.swap(other.not_batched_);
  return *this;
}

HOOKFORGE_INLINE Entry::Entry(std::initializer_list<std::pair<std::string, torch::Tensor>> fields) {
  fields_.reserve(fields.size());
  for (const auto& [name, tensor] : fields) {
    if (contains(name))
      throw std::invalid_argument("hookforge::Entry: field '" + name + "' given twice");
    fields_.emplace_back(name, tensor);
  }
}

HOOKFORGE_INLINE torch::Tensor& Entry::operator[](std::string_view name) {
  if (auto it = find(name); it != end()) return it->second;
  return fields_.emplace_back(std::string(name), torch::Tensor()).second;
}

HOOKFORGE_INLINE torch::Tensor& Entry::at(std::string_view name) {
  if (auto it = find(name); it != end()) return it->second;
  throw_missing(name);
}

HOOKFORGE_INLINE const torch::Tensor& Entry::at(std::string_view name) const {
  if (auto it = find(name); it != end()) return it->second;
  throw_missing(name);
}

HOOKFORGE_INLINE bool Entry::contains(std::string_view name) const { return find(name) != end(); }

HOOKFORGE_INLINE Entry& Entry::set(std::string_view name, torch::Tensor tensor) {
  (*this)[name] = std::move(tensor);
  mark_batched(name, true);
  return *this;
}

HOOKFORGE_INLINE Entry& Entry::set(std::string_view name, torch::Tensor tensor, not_batched_t) {
  (*this)[name] = std::move(tensor);
  mark_batched(name, false);
  return *this;
}

HOOKFORGE_INLINE bool Entry::is_batched(std::string_view name) const {
  return contains(name) && !marked_not_batched(name);
}

HOOKFORGE_INLINE bool Entry::erase(std::string_view name) {
  if (!contains(name)) return false;
  std::vector<value_type> rest;
  rest.reserve(fields_.size() - 1);
  for (auto& [n, t] : fields_)
    if (n != name) rest.emplace_back(n, std::move(t));
  fields_.swap(rest);
  mark_batched(name, true);
  return true;
}

HOOKFORGE_INLINE Entry::iterator Entry::find(std::string_view name) {
  for (auto it = fields_.begin(); it != fields_.end(); ++it)
    if (it->first == name) return it;
  return fields_.end();
}

HOOKFORGE_INLINE Entry::const_iterator Entry::find(std::string_view name) const {
  for (auto it = fields_.begin(); it != fields_.end(); ++it)
    if (it->first == name) return it;
  return fields_.end();
}

HOOKFORGE_INLINE void Entry::merge(const Entry& output) {
  if (&output == this) return;
  for (const auto& [name, tensor] : output) {
    (*this)[name] = tensor;
    mark_batched(name, !output.marked_not_batched(name));
  }
}

HOOKFORGE_INLINE void Entry::merge(Entry&& output) {
  if (&output == this) return;
  for (auto& [name, tensor] : output.fields_) {
    (*this)[name] = std::move(tensor);
    mark_batched(name, !output.marked_not_batched(name));
  }
  output.fields_.clear();
  output.not_batched_.clear();
}

HOOKFORGE_INLINE Entry Entry::to(torch::Device device, bool non_blocking) const {
  Entry moved;
  moved.fields_.reserve(fields_.size());
  for (const auto& [name, tensor] : fields_)
    moved.fields_.emplace_back(
        name, tensor.defined() ? tensor.to(device, tensor.scalar_type(), non_blocking) : tensor);
  moved.not_batched_ = not_batched_;
  return moved;
}

HOOKFORGE_INLINE std::size_t Entry::batch_size() const {
  const value_type* first = nullptr;
  std::int64_t size = 0;
  bool agree = true;
  for (const auto& field : fields_) {
    if (!counts_for_batch(field)) continue;
    const std::int64_t n = field.second.sizes()[0];
    if (first == nullptr) {
      first = &field;
      size = n;
    }
    agree = agree && n == size;
  }
  if (first == nullptr)
    throw std::logic_error(
        "hookforge::Entry::batch_size: no field has a batch dimension; fields: " +
        describe([](const value_type&) { return true; }));
  if (!agree)
    throw std::logic_error(
        "hookforge::Entry::batch_size: the batch-major fields disagree on the batch size: " +
        describe([this](const value_type& f) { return counts_for_batch(f); }) +
        "; mark a field without a batch dimension with "
        "set(name, tensor, hookforge::not_batched)");
  return static_cast<std::size_t>(size);
}

HOOKFORGE_INLINE std::vector<std::string> Entry::names() const {
  std::vector<std::string> out;
  out.reserve(fields_.size());
  for (const auto& field : fields_) out.push_back(field.first);
  return out;
}

HOOKFORGE_INLINE void Entry::throw_missing(std::string_view name) const {
  std::string msg = "hookforge::Entry has no field '" + std::string(name) + "'; fields: [";
  for (std::size_t i = 0; i < fields_.size(); ++i) msg += (i ? ", " : "") + fields_[i].first;
  throw std::out_of_range(msg + "]");
}

HOOKFORGE_INLINE bool Entry::marked_not_batched(std::string_view name) const {
  for (const auto& n : not_batched_)
    if (n == name) return true;
  return false;
}

HOOKFORGE_INLINE void Entry::mark_batched(std::string_view name, bool batched) {
  if (batched) {
    std::erase(not_batched_, name);
  } else if (!marked_not_batched(name)) {
    not_batched_.emplace_back(name);
  }
}

HOOKFORGE_INLINE bool Entry::counts_for_batch(const value_type& field) const {
  return field.second.defined() && field.second.dim() > 0 && !marked_not_batched(field.first);
}

}  // namespace hookforge
