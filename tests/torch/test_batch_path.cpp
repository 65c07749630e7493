// Datasets that serve a whole batch at once (get_batch): the loader takes that path, and
// its batches are the ones stacking the samples one by one gives, bit for bit, with and
// without worker threads, shuffled, and resumed mid-epoch.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/loader.hpp"
#include "hookforge/torch/data/procedural_images.hpp"

#include <catch2/catch.hpp>

#include "file_testing.hpp"

using namespace hookforge;

namespace {

/// `D` with its get_batch hidden: the loader stacks its samples one by one.
template <class D>
struct one_by_one {
  D data;
  std::size_t size() const { return data.size(); }
  Entry get(std::size_t i) const { return data.get(i); }
};

/// Every batch of one pass of `loader`.
template <class Loader>
std::vector<Entry> batches(Loader& loader) {
  std::vector<Entry> out;
  for (const Entry& batch : loader) out.push_back(batch);
  return out;
}

/// Whether `a` and `b` hold the same fields, in the same order, bit for bit.
bool identical(const std::vector<Entry>& a, const std::vector<Entry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].names() != b[i].names()) return false;
    for (const auto& [name, t] : a[i]) {
      const auto& u = b[i].at(name);
      if (t.dtype() != u.dtype() || t.sizes() != u.sizes() || !t.is_contiguous() ||
          !torch::equal(t, u))
        return false;
    }
  }
  return true;
}

/// The batches of one shuffled epoch (and a tail epoch) of `data`, with `workers` threads.
template <class D>
std::vector<Entry> epochs_of(D data, std::int64_t workers) {
  DataLoader loader(std::move(data),
                    {.batch_size = 5, .shuffle = true, .seed = 3, .workers = workers});
  auto out = batches(loader);
  for (auto& b : batches(loader)) out.push_back(std::move(b));
  return out;
}

tensor_dataset mixed(std::int64_t n) {
  return tensor_dataset{{"image", torch::rand({n, 1, 3, 4})},
                        {"label", torch::arange(n, torch::kLong)},
                        {"mask", torch::rand({n, 2}) > 0.5}};
}

static_assert(batch_dataset<tensor_dataset>);
static_assert(batch_dataset<subset<tensor_dataset>>);
static_assert(batch_dataset<ProceduralImages>);
static_assert(!batch_dataset<one_by_one<tensor_dataset>>);

}  // namespace

TEST_CASE("a dataset serving whole batches gives the batches stacking its samples gives",
          "[data][batch]") {
  torch::manual_seed(5);
  const auto data = mixed(23);
  const subset part(data, {22, 0, 7, 7, 3, 15, 9, 1, 2, 20, 11, 4});
  const ProceduralImages images({.count = 13, .size = 8, .scale = 2, .seed = 4, .cache = true});
  for (std::int64_t workers : {0, 2}) {
    CAPTURE(workers);
    CHECK(identical(epochs_of(data, workers), epochs_of(one_by_one<tensor_dataset>{data}, 0)));
    CHECK(identical(epochs_of(part, workers),
                    epochs_of(one_by_one<subset<tensor_dataset>>{part}, 0)));
    CHECK(
        identical(epochs_of(images, workers), epochs_of(one_by_one<ProceduralImages>{images}, 0)));
  }
  // Without its cache ProceduralImages draws and stacks: the same batches as the cache's.
  const ProceduralImages drawn({.count = 13, .size = 8, .scale = 2, .seed = 4});
  CHECK(identical(epochs_of(drawn, 0), epochs_of(images, 0)));
}

TEST_CASE("a gathered batch is a copy, and resumes mid-epoch like a stacked one", "[data][batch]") {
  const auto data = mixed(17);
  DataLoader loader(data, {.batch_size = 4, .shuffle = true, .seed = 9});
  auto straight = batches(loader);
  straight.front().at("image").fill_(-1);
  CHECK(data.fields().at("image").min().item<float>() >= 0);

  DataLoader first(data, {.batch_size = 4, .shuffle = true, .seed = 9});
  auto it = first.begin();
  ++it;  // batch 0 read
  ++it;  // batch 1 read
  DataLoader resumed(data, {.batch_size = 4, .shuffle = true, .seed = 9});
  resumed.load_state_dict(first.state_dict());
  const auto rest = batches(resumed);
  CHECK(identical(rest, std::vector<Entry>(straight.begin() + 2, straight.end())));
}

TEST_CASE("get_batch refuses an index past the end, naming the dataset", "[data][batch]") {
  const std::vector<std::size_t> past{1, 23};
  CHECK(tfx::error_of<std::out_of_range>([&] { (void)mixed(23).get_batch(past); }) ==
        "tensor_dataset::get_batch: index 23 out of range for 23 samples");
  const ProceduralImages images({.count = 23, .size = 8, .scale = 2, .cache = true});
  CHECK(tfx::error_of<std::out_of_range>([&] { (void)images.get_batch(past); }) ==
        "ProceduralImages::get_batch: index 23 out of range for 23 samples");
  const subset part(mixed(30), {0, 1});
  const std::vector<std::size_t> two{0, 2};
  CHECK(tfx::error_of<std::out_of_range>([&] { (void)part.get_batch(two); }) ==
        "subset::get: index 2 out of range for 2 samples");
}
