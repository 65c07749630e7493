// hookforge/run/loader.hpp — the loader kind: a DataLoader over a configured dataset.
//
//   train_loader:
//     _target: DataLoader
//     params: {dataset: ${ref:data.train}, batch_size: 16, shuffle: true, seed: 0, workers: 0}
//
// A loader entry builds a `std::shared_ptr<hookforge::run::Loader>`, which holds a
// hookforge::DataLoader<any_dataset> (torch/data/loader.hpp: batches, a per-epoch shuffle
// from (seed, epoch), worker threads that give the same batches). The Trainer takes one
// for training and one for validation.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "hookforge/config/register.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/torch/data/loader.hpp"

namespace hookforge::run {

struct loader_config {
  std::shared_ptr<Dataset> dataset;
  std::int64_t batch_size = 1;
  bool shuffle = false;
  std::uint64_t seed = 0;
  bool drop_last = false;
  std::int64_t workers = 0;
};

class Loader {
 public:
  explicit Loader(loader_config c)
      : loader_(any_dataset(require(c.dataset)), loader_options{.batch_size = c.batch_size,
                                                                .shuffle = c.shuffle,
                                                                .seed = c.seed,
                                                                .drop_last = c.drop_last,
                                                                .workers = c.workers}) {
    if (loader_.size() == 0)
      throw std::invalid_argument("DataLoader: no batches (the dataset has " +
                                  std::to_string(loader_.dataset().size()) + " samples, batch_size " +
                                  std::to_string(c.batch_size) + (c.drop_last ? ", drop_last)" : ")"));
  }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  DataLoader<any_dataset>& loader() { return loader_; }

 private:
  static std::shared_ptr<const Dataset> require(std::shared_ptr<Dataset> d) {
    if (!d) throw std::invalid_argument("DataLoader: dataset must be given");
    return d;
  }
  DataLoader<any_dataset> loader_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(loader, hookforge::run::Loader);
