// hookforge/torch/data/fields_of.hpp — what a loader's samples and a model's output hold, where
// they say it: the inputs of the batch-field checks made before training
// (core/runtime/field_flow.hpp).
//
//   hookforge::dataset_fields_of(loader);  // its dataset's field_names(), or nullopt
//   hookforge::output_fields_of(model);    // {"output"} for a forward returning a Tensor
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

namespace detail {

/// A list of names as a vector of strings; an optional one passes through.
template <class Names>
std::optional<std::vector<std::string>> as_field_names(Names&& names) {
  if constexpr (std::is_convertible_v<Names, std::optional<std::vector<std::string>>>)
    return std::optional<std::vector<std::string>>(std::forward<Names>(names));
  else
    return std::vector<std::string>(std::begin(names), std::end(names));
}

/// What model M's forward returns, as call_model calls it (void when it cannot be called).
template <class M>
auto forward_result() {
  if constexpr (forward_through_pointer<M>)
    return std::type_identity<decltype(std::declval<M&>()->forward(
        std::declval<const Entry&>()))>{};
  else if constexpr (forward_member<M>)
    return std::type_identity<decltype(std::declval<M&>().forward(std::declval<const Entry&>()))>{};
  else if constexpr (entry_callable<M>)
    return std::type_identity<std::invoke_result_t<M&, const Entry&>>{};
  else
    return std::type_identity<void>{};
}
template <class M>
using forward_result_t = std::remove_cvref_t<typename decltype(forward_result<M>())::type>;

}  // namespace detail

/// The fields of the samples `loader` gives, where its dataset says them (`field_names()`);
/// nullopt for a loader without a dataset or a dataset that does not say.
template <class Loader>
std::optional<std::vector<std::string>> dataset_fields_of(const Loader& loader) {
  if constexpr (requires { loader.dataset().field_names(); })
    return detail::as_field_names(loader.dataset().field_names());
  else
    return std::nullopt;
}

/// The fields `model`'s forward adds to the batch: what the model says (`output_fields()`,
/// on it or its module), else "output" for a forward returning a Tensor; nullopt for an Entry
/// whose fields it does not say.
template <class M>
std::optional<std::vector<std::string>> output_fields_of(const M& model) {
  if constexpr (requires { model.output_fields(); })
    return detail::as_field_names(model.output_fields());
  else if constexpr (requires { model->output_fields(); })
    return detail::as_field_names(model->output_fields());
  else if constexpr (std::is_same_v<detail::forward_result_t<M>, torch::Tensor>)
    return std::vector<std::string>{"output"};
  else
    return std::nullopt;
}

}  // namespace hookforge
