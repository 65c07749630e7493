// hookforge/run/loader.hpp — the loader kind: a DataLoader over a configured dataset.
//
//   train_loader:
//     _target: DataLoader
//     params: {dataset: ${ref:data.train}, batch_size: 16, shuffle: true, seed: 0, workers: 0,
//              pin_memory: true}
//
// A loader entry builds a `std::shared_ptr<hookforge::run::Loader>`, which holds a
// hookforge::DataLoader (torch/data/loader.hpp: batches, a per-epoch shuffle from
// (seed, epoch), worker threads that give the same batches). The Trainer takes one for
// training and one for validation. `pin_memory` puts batches in page-locked memory where a
// CUDA device is present, so their copy to a `cuda` device is asynchronous (no-op otherwise).
//
// Data-parallel runs (settings().world_size > 1): with `shard: true` (the default) the
// loader visits this rank's shard of each epoch's order (hookforge::sharded_sampler: every
// world_size-th index from the rank's, padded so every rank has ceil(n / world_size)
// samples); every rank computes the same order from the same `seed`, so the shards are
// disjoint and reshuffled together each epoch. batch_size is per rank: 2 ranks with
// batch_size 8 make the global batch of 1 rank with 16. In a run of one process the
// shard is the whole order, so nothing changes.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "hookforge/config/register.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/run/machine.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/torch/data/loader.hpp"
#include "hookforge/torch/data/sampler.hpp"

namespace hookforge::run {

struct loader_config {
  std::shared_ptr<Dataset> dataset;
  std::int64_t batch_size = 1;
  bool shuffle = false;
  std::uint64_t seed = 0;
  bool drop_last = false;
  std::int64_t workers = 0;
  bool pin_memory = false;
  bool shard = true;  ///< this rank's shard in a data-parallel run (see above)
};

/// The DataLoader a Loader holds: the default sampler (sequential or shuffled), sharded.
using run_data_loader = DataLoader<any_dataset, sharded_sampler<default_sampler>>;

class Loader {
 public:
  explicit Loader(loader_config c) : loader_(make(require(c.dataset), c)) {
    if (loader_.size() == 0)
      throw std::invalid_argument("DataLoader: no batches (the dataset has " +
                                  std::to_string(loader_.dataset().size()) +
                                  " samples, batch_size " + std::to_string(c.batch_size) +
                                  (c.drop_last ? ", drop_last)" : ")"));
  }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  run_data_loader& loader() { return loader_; }

 private:
  static run_data_loader make(std::shared_ptr<const Dataset> dataset, const loader_config& c) {
    const auto& s = settings();
    const bool sharded = c.shard && s.world_size > 1;
    // The sampler keeps every index (8 bytes each): refused here, before it allocates them.
    if (!affordable(static_cast<double>(dataset->size()) * sizeof(std::int64_t)))
      throw std::invalid_argument(fmt::format(
          "DataLoader: a dataset of {} samples needs {} for its order of samples, more than half "
          "this machine's memory ({})",
          dataset->size(), gibibytes(static_cast<double>(dataset->size()) * sizeof(std::int64_t)),
          gibibytes(allocation_budget())));
    default_sampler order(dataset->size(), c.shuffle, c.seed);
    return run_data_loader(
        any_dataset(std::move(dataset)),
        sharded_sampler<default_sampler>(order, sharded ? s.rank : 0, sharded ? s.world_size : 1),
        loader_options{.batch_size = c.batch_size,
                       .shuffle = false,  // the sampler shuffles
                       .seed = c.seed,
                       .drop_last = c.drop_last,
                       .workers = c.workers,
                       .pin_memory = c.pin_memory});
  }
  static std::shared_ptr<const Dataset> require(std::shared_ptr<Dataset> d) {
    if (!d) throw std::invalid_argument("DataLoader: dataset must be given");
    return d;
  }
  run_data_loader loader_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(loader, hookforge::run::Loader);
