// hookforge/torch/data/example_dataset.hpp — a LibTorch dataset of torch::data::Example<> as a
// hookforge dataset of Entry samples.
//
//   hookforge::example_dataset mnist(torch::data::datasets::MNIST(root));
//   hookforge::Entry sample = mnist.get(0);  // {"input": image [1, 28, 28], "target": label []}
//   hookforge::DataLoader train(mnist, {.batch_size = 64, .shuffle = true});
//
// Sample i is the dataset's example i, its `data` under one field name and its `target` under
// another ("input" and "target" unless given; no target field when the target is undefined).
// The source is any `torch::data::datasets::Dataset<D, torch::data::Example<>>` (MNIST, the
// user's own), or a stateless dataset whose get_batch gives examples (`MNIST(root).map(
// torch::data::transforms::Normalize<>(0.1307, 0.3081))`): anything torch_example_source below.
// A batch-level transform (Stack<>) is left out: the hookforge loader stacks the samples.
//
// LibTorch's get is not const: the adapter holds the source behind a std::shared_ptr (copies
// share it) and calls it from its const get. With loader workers, get runs on several threads
// at once, as LibTorch's own DataLoader calls its dataset: the source must allow that (MNIST,
// which only indexes tensors, does).
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <c10/util/ArrayRef.h>
#include <torch/data/example.h>

#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

/// A LibTorch dataset of torch::data::Example<>: get_batch(indices) gives one example per
/// index (Dataset<D, Example<>> has it, calling get(i) for each), size() a known size.
/// size() returns torch::optional<size_t>: c10::optional in LibTorch 1.13, std::optional in 2.x.
template <class D>
concept torch_example_source = requires(D& d, const D& cd, std::size_t i) {
  { cd.size().has_value() } -> std::convertible_to<bool>;
  { *cd.size() } -> std::convertible_to<std::size_t>;
  {
    d.get_batch(c10::ArrayRef<std::size_t>(i))
  } -> std::same_as<std::vector<torch::data::Example<>>>;
};

/// The field names an example's data and target take in the Entry.
struct example_fields {
  std::string data = "input";
  std::string target = "target";
};

/// See the top of this file.
template <torch_example_source D>
class example_dataset {
 public:
  using source_type = D;

  explicit example_dataset(D source, example_fields fields = {})
      : example_dataset(std::make_shared<D>(std::move(source)), std::move(fields)) {}
  /// Throws std::invalid_argument for a null source, one of unknown size, or field names
  /// empty or equal.
  explicit example_dataset(std::shared_ptr<D> source, example_fields fields = {})
      : source_(std::move(source)), fields_(std::move(fields)) {
    if (!source_) throw std::invalid_argument("example_dataset: source must not be null");
    const auto n = std::as_const(*source_).size();
    if (!n.has_value())
      throw std::invalid_argument("example_dataset: the source's size() must be known");
    size_ = *n;
    if (fields_.data.empty() || fields_.target.empty() || fields_.data == fields_.target)
      throw std::invalid_argument("example_dataset: the data and target fields must be two names");
  }

  std::size_t size() const noexcept { return size_; }

  /// Example `index` as {data field: data, target field: target}. std::out_of_range past the end.
  Entry get(std::size_t index) const {
    if (index >= size_)
      throw std::out_of_range("example_dataset::get: index " + std::to_string(index) +
                              " out of range for " + std::to_string(size_) + " samples");
    std::vector<torch::data::Example<>> examples =
        source_->get_batch(c10::ArrayRef<std::size_t>(index));
    if (examples.size() != 1)
      throw std::logic_error("example_dataset::get: the source gave " +
                             std::to_string(examples.size()) + " examples for one index");
    Entry sample;
    sample.set(fields_.data, std::move(examples.front().data));
    if (examples.front().target.defined())
      sample.set(fields_.target, std::move(examples.front().target));
    return sample;
  }

  /// The LibTorch dataset, shared by the copies of this adapter.
  D& source() const noexcept { return *source_; }
  const example_fields& fields() const noexcept { return fields_; }

 private:
  std::shared_ptr<D> source_;
  example_fields fields_;
  std::size_t size_ = 0;
};

}  // namespace hookforge
