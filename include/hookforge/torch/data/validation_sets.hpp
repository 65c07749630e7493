// hookforge/torch/data/validation_sets.hpp — several validation loaders, each named, given to
// Trainer::fit in place of one (Lightning's list of val dataloaders, MMEngine's evaluators):
//
//   hookforge::validation_sets sets{hookforge::named_loader{"set5", set5_loader},
//                                   hookforge::named_loader{"urban100", urban_loader}};
//   trainer.fit(train_loader, sets, criterion);
//
// Each validation runs the validation runner's epoch over every set, in the order given, and
// the scores of set `s` are "<s>/<score>" ("set5/PSNR", "urban100/loss"): a monitor, an
// EarlyStopping or a CheckpointSaver names one of them. Hooks of the validation runner see
// the set as ctx.dataset. The loaders are referred to, not copied, and must outlive the call.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace hookforge {

/// Whether `name` can name a validation set: non-empty and without '/', the separator of its
/// scores ("<name>/<score>").
inline bool is_set_name(std::string_view name) {
  return !name.empty() && name.find('/') == std::string_view::npos;
}

/// A validation loader and its name in the scores.
template <class Loader>
struct named_loader {
  std::string name;
  Loader* loader;
  named_loader(std::string set_name, Loader& set_loader)
      : name(std::move(set_name)), loader(&set_loader) {}
};

/// Validation loaders of one type, each named (see the top of this header).
template <class Loader>
class validation_sets {
 public:
  using loader_type = Loader;

  /// std::invalid_argument for no sets, an empty name, a name with '/' (the scores' separator)
  /// or a name given twice.
  explicit validation_sets(std::vector<named_loader<Loader>> sets) : sets_(std::move(sets)) {
    if (sets_.empty())
      throw std::invalid_argument("hookforge::validation_sets: give at least one named loader");
    for (auto it = sets_.begin(); it != sets_.end(); ++it) {
      if (!is_set_name(it->name))
        throw std::invalid_argument(
            "hookforge::validation_sets: a set's name must be non-empty "
            "and without '/' (its scores are \"<name>/<score>\"), got \"" +
            it->name + "\"");
      for (auto other = sets_.begin(); other != it; ++other)
        if (other->name == it->name)
          throw std::invalid_argument("hookforge::validation_sets: the name \"" + it->name +
                                      "\" is given twice");
    }
  }
  validation_sets(std::initializer_list<named_loader<Loader>> sets)
      : validation_sets(std::vector<named_loader<Loader>>(sets)) {}

  auto begin() const { return sets_.begin(); }
  auto end() const { return sets_.end(); }
  std::size_t size() const { return sets_.size(); }

 private:
  std::vector<named_loader<Loader>> sets_;
};

template <class Loader>
validation_sets(std::initializer_list<named_loader<Loader>>) -> validation_sets<Loader>;

namespace detail {
template <class T>
struct validation_loader_of {
  using type = T;
};
template <class Loader>
struct validation_loader_of<validation_sets<Loader>> {
  using type = Loader;
};
}  // namespace detail

/// Whether `T` (cv and reference aside) is a validation_sets.
template <class T>
inline constexpr bool is_validation_sets =
    !std::is_same_v<typename detail::validation_loader_of<std::remove_cvref_t<T>>::type,
                    std::remove_cvref_t<T>>;

/// What the validation runner runs over: each set's loader, else `Loader` itself.
template <class Loader>
using validation_loader_t =
    std::conditional_t<is_validation_sets<Loader>,
                       typename detail::validation_loader_of<std::remove_cvref_t<Loader>>::type,
                       std::remove_reference_t<Loader>>;

}  // namespace hookforge
