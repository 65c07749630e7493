// hookforge/torch/data/batches.hpp — walking a loader batch by batch, knowing which batch is last.
//
// A loader is any range of Entry (a std::vector<Entry>, a torch DataLoader
// yielding Entry, a generator). Runners need "is this the last batch?" to take
// the final optimiser step of an epoch, which an input iterator cannot answer
// without looking ahead — so the walk copies each batch out (an Entry copy shares
// its tensors) and advances before handing it over.
#pragma once

#include <cstdint>
#include <iterator>  // also declares std::ranges::size; <ranges> would cost ~3,500 lines
#include <type_traits>
#include <utility>

#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/profiling/range.hpp"

namespace hookforge {

/// Number of batches, or -1 when the loader cannot say without iterating.
template <class Loader>
std::int64_t batch_count(Loader& loader) {
  if constexpr (requires { std::ranges::size(loader); })
    return static_cast<std::int64_t>(std::ranges::size(loader));
  else
    return -1;
}

/// Calls `f(Entry&& batch, bool is_last)` for each batch; stops early when f returns false.
template <class Loader, class F>
void for_each_batch(Loader& loader, F&& f) {
  auto it = std::begin(loader);
  auto end = std::end(loader);
  while (it != end) {
    // A loader that keeps its batches (a vector) hands out references: copy, with room for
    // the model's output. One that makes them (DataLoader) hands out values: take them.
    Entry batch = [&] {
      const detail::step_range phase(range_kind::phase, "loader");
      Entry next = [&] {
        if constexpr (std::is_reference_v<decltype(*it)>)
          return Entry(*it, 1);
        else
          return Entry(*it);
      }();
      ++it;
      return next;
    }();
    if (!f(std::move(batch), it == end)) return;
  }
}

}  // namespace hookforge
