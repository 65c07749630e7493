// hookforge/run/loss.hpp — the loss kind: a criterion built from a config.
//
//   loss:
//     _target: WeightedSum              # L1, MSE, Charbonnier, WeightedSum, GANDiscriminatorLoss,
//     ... params:
//       terms:
//         - {name: charbonnier, loss: {_target: Charbonnier, params: {eps: 1.0e-3}}}
//         - {name: l1, weight: 0.1, loss: {_target: L1}}
//
// A loss entry builds a `std::shared_ptr<hookforge::run::Loss>`: called on the batch (the
// model's output merged in), it returns named terms whose sum is the loss ("loss" when
// there is one), and set_epoch reaches criteria with a schedule. Any criterion
// (torch/data/criterion.hpp) registers through `criterion_loss`:
//
//   HOOKFORGE_REGISTER_AS(loss, "Charbonnier",
//   hookforge::run::criterion_loss<hookforge::Charbonnier>,
//                         hookforge::config::options<hookforge::charbonnier_options>(...));
//
// (its options are checked when built: a criterion's validate()). `loss_fn` is what the
// runners are given: a copyable criterion sharing one Loss.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <torch/types.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/keys.hpp"
#include "hookforge/config/register.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/losses/weighted_sum.hpp"

namespace hookforge::run {

/// What a loss entry builds (see the top of this header).
class Loss {
 public:
  virtual ~Loss() = default;
  /// The named terms of the loss on `batch`; their sum is the loss.
  virtual loss_terms operator()(const Entry& batch) = 0;
  /// Called by the Trainer before each epoch (criteria whose weights follow a schedule).
  virtual void set_epoch(std::int64_t epoch) { (void)epoch; }
  /// The names of its terms besides "loss", which the runners report as scores; nullopt
  /// where they are known only from what it returns.
  virtual std::optional<std::vector<std::string>> term_names() const { return std::nullopt; }
};

/// A criterion (callable on a const Entry&, returning a Tensor or loss_terms) as a Loss.
template <class C>
class criterion_loss final : public Loss {
 public:
  template <class... A>
    requires(std::constructible_from<C, A...> &&
             !(sizeof...(A) == 1 &&
               (std::is_same_v<std::remove_cvref_t<A>, criterion_loss> && ...)))
  explicit criterion_loss(A&&... args) : criterion_(std::forward<A>(args)...) {
    static_assert(
        hookforge::criterion<C>,
        "hookforge::run::criterion_loss: C must be callable on a const Entry& and return a Tensor "
        "or loss_terms");
    if constexpr (requires { criterion_.validate(); })
      criterion_.validate();  // options checked when built
  }
  loss_terms operator()(const Entry& batch) override {
    return evaluate_criterion(criterion_, batch);
  }
  void set_epoch(std::int64_t epoch) override { update_criterion_schedule(criterion_, epoch); }
  std::optional<std::vector<std::string>> term_names() const override {
    if constexpr (std::is_same_v<std::invoke_result_t<C&, const Entry&>, torch::Tensor>)
      return std::vector<std::string>{};  // one tensor: "loss" alone
    else
      return std::nullopt;
  }
  C& criterion() { return criterion_; }

 private:
  C criterion_;
};

/// The criterion the runners get: shares one Loss (copies call the same object).
struct loss_fn {
  std::shared_ptr<Loss> loss;
  loss_terms operator()(const Entry& batch) const { return (*loss)(batch); }
  void set_epoch(std::int64_t epoch) const { loss->set_epoch(epoch); }
};

/// One term of a WeightedSum entry: `{name: l1, weight: 1.0, loss: {_target: L1}}`.
struct weighted_term_config {
  std::string name;
  double weight = 1.0;
  std::shared_ptr<Loss> loss;
};

/// hookforge::WeightedSum over configured losses (each term's loss is the sum of its
/// terms); set_epoch reaches every term's loss.
class weighted_sum_loss final : public Loss {
 public:
  explicit weighted_sum_loss(std::vector<weighted_term_config> terms) : terms_(std::move(terms)) {
    for (const auto& t : terms_) {
      if (!t.loss) throw std::invalid_argument("WeightedSum: term '" + t.name + "' has no loss");
      sum_.terms.push_back(
          {t.name, t.weight, [loss = t.loss](const Entry& e) { return total_loss((*loss)(e)); }});
    }
    sum_.validate();
  }
  loss_terms operator()(const Entry& batch) override { return sum_(batch); }
  void set_epoch(std::int64_t epoch) override {
    for (auto& t : terms_) t.loss->set_epoch(epoch);
  }
  std::optional<std::vector<std::string>> term_names() const override {
    std::vector<std::string> names;
    for (const auto& t : terms_) names.push_back(t.name);
    return names;
  }

 private:
  std::vector<weighted_term_config> terms_;
  WeightedSum sum_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(loss, hookforge::run::Loss);

/// A WeightedSum term as a config writes it: a mapping with name, weight (1 by default) and loss.
template <>
struct hookforge::config::value_traits<hookforge::run::weighted_term_config> {
  static std::string expected() {
    return "a term: a mapping with name, weight (default 1) and loss";
  }
  template <class B>
  static hookforge::run::weighted_term_config read(B& b, const value& v) {
    if (!v.is_map()) detail::wrong(v, expected());
    check_keys(
        v, known_keys{.what = "a key of a WeightedSum term", .names = {"name", "weight", "loss"}});
    hookforge::run::weighted_term_config term;
    bool named = false, has_loss = false;
    for (const auto& item : v.items()) {
      if (item.name == "name") {
        term.name = b.template read<std::string>(item.val);
        named = true;
      } else if (item.name == "weight") {
        term.weight = b.template read<double>(item.val);
      } else if (item.name == "loss") {
        term.loss = b.template read<std::shared_ptr<hookforge::run::Loss>>(item.val);
        has_loss = true;
      }
    }
    if (!named || !has_loss)
      throw config_error(v.where(), v.key(), expected(),
                         fmt::format("a term without {}", !named ? "its name" : "its loss"));
    return term;
  }
};
