// Datasets, samplers, the DataLoader (collation, shuffling, drop_last, resume, workers),
// random_split, and example_dataset (a LibTorch dataset of Example<>).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ranges>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/example_dataset.hpp"
#include "hookforge/torch/data/loader.hpp"
#include "hookforge/torch/data/sampler.hpp"
#include "hookforge/torch/data/split.hpp"

#include <catch2/catch.hpp>

#include "file_testing.hpp"
#include "skip.hpp"

using namespace hookforge;

namespace {

/// n samples: "input" row i = [2i, 2i+1] (float), "target" i (int64, 0-dimensional per sample).
tensor_dataset numbered(std::int64_t n) {
  return tensor_dataset{{"input", torch::arange(2 * n, torch::kFloat).reshape({n, 2})},
                        {"target", torch::arange(n, torch::kLong)}};
}

/// The sample indices of each batch (read from "target").
std::vector<std::int64_t> ids(const Entry& batch) {
  auto t = batch.at("target").contiguous();
  return {t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel()};
}

/// Up to `limit` batches of the next iteration (all of them by default).
template <class Loader>
std::vector<Entry> take(Loader& loader, std::size_t limit = SIZE_MAX) {
  std::vector<Entry> out;
  for (auto it = loader.begin(); it != loader.end() && out.size() < limit; ++it) out.push_back(*it);
  return out;
}

std::vector<std::vector<std::int64_t>> orders(const std::vector<Entry>& batches) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& b : batches) out.push_back(ids(b));
  return out;
}

bool same_batches(const std::vector<Entry>& a, const std::vector<Entry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].names() != b[i].names()) return false;
    for (const auto& [name, t] : a[i])
      if (!torch::equal(t, b[i].at(name))) return false;
  }
  return true;
}

/// Samples whose "input" is [3] except at `odd`, where it is [4]; optionally lacks "extra".
struct ragged_dataset {
  std::size_t n = 8;
  std::size_t odd = 5;
  bool missing_field = false;
  std::size_t size() const { return n; }
  Entry get(std::size_t i) const {
    Entry e{{"input", torch::zeros({i == odd && !missing_field ? 4 : 3})}};
    if (!(missing_field && i == odd)) e.set("extra", torch::ones({1}));
    return e;
  }
};

/// The indices in reverse, every epoch: a custom index_sampler.
struct reverse_sampler {
  std::size_t n;
  std::size_t size() const { return n; }
  std::vector<std::size_t> indices(std::int64_t) const {
    std::vector<std::size_t> out(n);
    std::iota(out.rbegin(), out.rend(), std::size_t{0});
    return out;
  }
};

/// Records {epoch, batch_idx, num_batches} at each on_post_step.
struct CounterProbeForData {
  std::vector<std::vector<std::int64_t>>* rows;
  void see(TrainingContext& ctx) { rows->push_back({ctx.epoch, ctx.batch_idx, ctx.num_batches}); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(see, points::on_post_step));
};

static_assert(dataset<tensor_dataset>);
static_assert(dataset<subset<tensor_dataset>>);
static_assert(index_sampler<sequential_sampler> && index_sampler<random_sampler> &&
              index_sampler<reverse_sampler>);
static_assert(seeded_sampler<random_sampler> && seeded_sampler<default_sampler> &&
              !seeded_sampler<sequential_sampler>);
static_assert(std::ranges::input_range<DataLoader<tensor_dataset>>);
static_assert(std::ranges::sized_range<DataLoader<tensor_dataset>>);

}  // namespace

TEST_CASE("tensor_dataset and subset give one unbatched sample per index", "[data]") {
  auto data = numbered(5);
  CHECK(data.size() == 5);
  auto s = data.get(3);
  CHECK(s.names() == std::vector<std::string>{"input", "target"});
  CHECK(s.at("input").sizes() == torch::IntArrayRef{2});
  CHECK(s.at("target").dim() == 0);
  CHECK(s.at("target").item<std::int64_t>() == 3);
  CHECK_THROWS_AS(data.get(5), std::out_of_range);

  subset part(data, {4, 0, 2});
  CHECK(part.size() == 3);
  CHECK(part.get(0).at("target").item<std::int64_t>() == 4);
  CHECK(part.get(2).at("input").equal(data.get(2).at("input")));
  CHECK(tfx::error_of<std::invalid_argument>([&] { subset(data, {1, 5}); }) ==
        "subset: indices[1] must be < 5 (the dataset's size), got 5");

  CHECK(tfx::error_of<std::invalid_argument>(
            [] { tensor_dataset{{"x", torch::zeros({4, 2})}, {"y", torch::zeros({3})}}; }) ==
        "tensor_dataset: fields must agree on the number of samples (dim 0), got 4 for 'x' and 3 "
        "for 'y'");
  CHECK(
      tfx::error_of<std::invalid_argument>([] { tensor_dataset{{"x", torch::zeros({})}}; }) ==
      "tensor_dataset: field 'x' must have a sample dimension (dim 0), got a 0-dimensional tensor");
  CHECK(tfx::error_of<std::invalid_argument>([] { tensor_dataset(Entry{}); }) ==
        "tensor_dataset: fields must not be empty");
}

TEST_CASE("DataLoader collates samples by stacking each field", "[data]") {
  DataLoader loader(numbered(7), {.batch_size = 3});
  auto batches = take(loader);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0].at("input").sizes() == torch::IntArrayRef{3, 2});
  CHECK(batches[0].at("target").sizes() == torch::IntArrayRef{3});
  CHECK(batches[0].at("input").equal(torch::arange(6, torch::kFloat).reshape({3, 2})));
  CHECK(batches[0].names() == std::vector<std::string>{"input", "target"});
  CHECK(batches[0].batch_size() == 3);
  CHECK(orders(batches) == std::vector<std::vector<std::int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}});
  // A batch is a copy: writing to it leaves the dataset alone.
  batches[0].at("input").fill_(-1);
  CHECK(loader.dataset().get(0).at("input")[0].item<float>() == 0.0f);
}

TEST_CASE("a field whose samples disagree in shape is an error naming it and both shapes",
          "[data]") {
  DataLoader shapes(ragged_dataset{}, {.batch_size = 4});
  auto it = shapes.begin();
  (void)*it;  // samples 0..3 agree
  ++it;
  CHECK(tfx::error_of<std::invalid_argument>([&] { (void)*it; }) ==
        "DataLoader: field 'input' has shape [3] in sample 4 but [4] in sample 5; the samples of a "
        "batch must "
        "agree on each field's shape");

  DataLoader fields(ragged_dataset{.missing_field = true}, {.batch_size = 8});
  CHECK(tfx::error_of<std::invalid_argument>([&] { take(fields); }) ==
        "DataLoader: field 'extra' is in sample 0 but not in sample 5");
}

TEST_CASE("size() is batches per epoch, drop_last drops the short batch", "[data]") {
  auto sizes = [](DataLoader<tensor_dataset>& loader) {
    std::vector<std::int64_t> out;
    for (const auto& b : take(loader)) out.push_back(static_cast<std::int64_t>(b.batch_size()));
    return out;
  };
  DataLoader keep(numbered(10), {.batch_size = 4});
  DataLoader drop(numbered(10), {.batch_size = 4, .drop_last = true});
  DataLoader exact(numbered(8), {.batch_size = 4, .drop_last = true});
  DataLoader tiny(numbered(3), {.batch_size = 4, .drop_last = true});
  CHECK(keep.size() == 3);
  CHECK(sizes(keep) == std::vector<std::int64_t>{4, 4, 2});
  CHECK(drop.size() == 2);
  CHECK(sizes(drop) == std::vector<std::int64_t>{4, 4});
  CHECK(exact.size() == 2);
  CHECK(sizes(exact) == std::vector<std::int64_t>{4, 4});
  CHECK(tiny.size() == 0);
  CHECK(take(tiny).empty());
  CHECK(batch_count(keep) == 3);
}

TEST_CASE("shuffling is a permutation fixed by (seed, epoch), new each epoch", "[data]") {
  const loader_options opts{.batch_size = 5, .shuffle = true, .seed = 11};
  DataLoader a(numbered(20), opts);
  DataLoader b(numbered(20), opts);
  auto a0 = take(a);
  auto a1 = take(a);  // a fresh iteration after a full epoch is epoch 1
  CHECK(a.epoch() == 1);
  CHECK(same_batches(a0, take(b)));

  // Epoch 1's order does not depend on having run epoch 0.
  DataLoader c(numbered(20), opts);
  c.set_epoch(1);
  CHECK(same_batches(a1, take(c)));

  auto flat = [](const std::vector<Entry>& batches) {
    std::vector<std::int64_t> out;
    for (const auto& o : orders(batches)) out.insert(out.end(), o.begin(), o.end());
    return out;
  };
  auto f0 = flat(a0), f1 = flat(a1);
  CHECK(f0 != f1);
  auto sorted = f0;
  std::ranges::sort(sorted);
  std::vector<std::int64_t> all(20);
  std::iota(all.begin(), all.end(), 0);
  CHECK(sorted == all);

  DataLoader other_seed(numbered(20), {.batch_size = 5, .shuffle = true, .seed = 12});
  CHECK(flat(take(other_seed)) != f0);
  DataLoader plain(numbered(20), {.batch_size = 5});
  CHECK(flat(take(plain)) == all);
  CHECK(flat(take(plain)) == all);  // and every epoch

  // set_epoch(e) replays epoch e.
  a.set_epoch(0);
  CHECK(same_batches(a0, take(a)));
  a.set_epoch(0);  // epoch 0 finished: starts it again
  CHECK(same_batches(a0, take(a)));
}

TEST_CASE("a custom sampler decides the order", "[data]") {
  DataLoader loader(numbered(5), reverse_sampler{5}, {.batch_size = 2});
  CHECK(orders(take(loader)) == std::vector<std::vector<std::int64_t>>{{4, 3}, {2, 1}, {0}});
  CHECK(loader.seed() == 0);
  CHECK(tfx::error_of<std::invalid_argument>(
            [] { DataLoader(numbered(5), reverse_sampler{5}, {.shuffle = true}); }) ==
        "DataLoader: shuffle must be false when a sampler is given (the sampler decides the "
        "order), got true");
  DataLoader bad(numbered(5), reverse_sampler{6});
  CHECK(tfx::error_of<std::invalid_argument>([&] { take(bad); }) ==
        "DataLoader: the sampler's indices must be < 5 (the dataset's size), got 5");
}

TEST_CASE("a loader restored mid-epoch yields exactly the remaining batches, bit for bit",
          "[data]") {
  const loader_options opts{.batch_size = 3, .shuffle = true, .seed = 5};
  DataLoader reference(numbered(17), opts);
  take(reference);
  auto epoch1 = take(reference);  // what epoch 1 should be
  REQUIRE(epoch1.size() == 6);

  DataLoader run(numbered(17), opts);
  take(run);
  run.set_epoch(1);
  // Stop after the third batch of epoch 1, as a checkpoint taken in a batch hook would.
  std::vector<Entry> seen;
  state_map saved;
  for_each_batch(run, [&](Entry&& batch, bool) {
    seen.push_back(batch);
    if (seen.size() < 3) return true;
    saved = run.state_dict();
    return false;
  });
  CHECK(saved.at("epoch").toInt() == 1);
  CHECK(saved.at("batches_yielded").toInt() == 3);
  CHECK(saved.at("seed").toInt() == 5);

  for (std::int64_t workers : {0, 2}) {
    DYNAMIC_SECTION("workers = " << workers) {
      DataLoader restored(
          numbered(17),
          loader_options{.batch_size = 3, .shuffle = true, .seed = 99, .workers = workers});
      restored.load_state_dict(saved);
      CHECK(restored.seed() == 5);
      restored.set_epoch(1);  // as the Trainer does after restoring: keeps the position
      auto rest = take(restored);
      CHECK(same_batches(rest, std::vector<Entry>(epoch1.begin() + 3, epoch1.end())));
      CHECK(restored.batches_yielded() == 6);
      // ...and then epoch 2, as the uninterrupted loader has it.
      CHECK(same_batches(take(restored), take(reference)));
    }
  }

  // The interrupted loader itself goes on from where it stopped.
  auto rest = take(run);
  CHECK(same_batches(rest, std::vector<Entry>(epoch1.begin() + 3, epoch1.end())));

  // A state saved at the end of an epoch resumes at the start of the next.
  DataLoader after(numbered(17), opts);
  after.load_state_dict(run.state_dict());
  DataLoader fresh(numbered(17), opts);
  fresh.set_epoch(2);
  CHECK(same_batches(take(after), take(fresh)));
  CHECK(after.epoch() == 2);
}

TEST_CASE("DataLoader::load_state_dict checks what it restores", "[data]") {
  DataLoader loader(numbered(10), {.batch_size = 3});
  auto state = loader.state_dict();
  DataLoader other(numbered(12), {.batch_size = 3});
  CHECK(tfx::error_of<std::invalid_argument>([&] { other.load_state_dict(state); }) ==
        "DataLoader::load_state_dict: the state is for 10 samples in batches of 3, this loader has "
        "12 in batches of 3");
  auto missing = state;
  missing.erase("epoch");
  CHECK(tfx::error_of<std::invalid_argument>([&] { loader.load_state_dict(missing); }) ==
        "DataLoader: the saved state has no 'epoch' (it has: 'batch_size', 'batches_yielded', "
        "'num_samples', 'seed')");
  auto past = state;
  past["batches_yielded"] = std::int64_t{5};
  CHECK(tfx::error_of<std::invalid_argument>([&] { loader.load_state_dict(past); }) ==
        "DataLoader::load_state_dict: batches_yielded must be in [0, 4], got 5");
}

TEST_CASE("worker threads yield the same batches as workers = 0", "[data]") {
  for (std::int64_t workers : {1, 3}) {
    DYNAMIC_SECTION("workers = " << workers) {
      const auto opts = [&](std::int64_t w) {
        return loader_options{.batch_size = 4, .shuffle = true, .seed = 3, .workers = w};
      };
      DataLoader serial(numbered(37), opts(0));
      DataLoader threaded(numbered(37), opts(workers));
      for (int epoch = 0; epoch < 3; ++epoch) CHECK(same_batches(take(serial), take(threaded)));
      // An iteration abandoned half way, then continued, then a new epoch.
      CHECK(same_batches(take(serial, 2), take(threaded, 2)));
      CHECK(same_batches(take(serial), take(threaded)));
      serial.set_epoch(7);
      threaded.set_epoch(7);
      CHECK(same_batches(take(serial), take(threaded)));
      CHECK(threaded.state_dict() == serial.state_dict());

      // An error in a worker reaches the reader as it was thrown.
      DataLoader ragged(ragged_dataset{}, {.batch_size = 4, .workers = workers});
      CHECK_THROWS_WITH(
          take(ragged),
          Catch::Contains("field 'input' has shape [3] in sample 4 but [4] in sample 5"));
      CHECK_THROWS_AS(take(ragged), std::invalid_argument);
    }
  }
}

TEST_CASE("DataLoader's settings are checked at construction", "[data]") {
  CHECK(tfx::error_of<std::invalid_argument>([] { DataLoader(numbered(4), {.batch_size = 0}); }) ==
        "DataLoader: batch_size must be >= 1, got 0");
  CHECK(tfx::error_of<std::invalid_argument>([] { DataLoader(numbered(4), {.workers = -1}); }) ==
        "DataLoader: workers must be >= 0, got -1");
  DataLoader loader(numbered(4));
  CHECK(tfx::error_of<std::invalid_argument>([&] { loader.set_epoch(-1); }) ==
        "DataLoader: epoch must be >= 0, got -1");
}

TEST_CASE("random_split cuts a dataset into disjoint subsets fixed by the seed", "[data]") {
  auto data = numbered(11);
  auto covered = [](const auto& parts) {
    std::multiset<std::size_t> all;
    for (const auto& p : parts) all.insert(p.indices().begin(), p.indices().end());
    return all;
  };
  auto halves = random_split(data, {0.5, 0.5}, 1);
  REQUIRE(halves.size() == 2);
  CHECK(halves[0].size() == 6);
  CHECK(halves[1].size() == 5);
  auto all = covered(halves);
  CHECK(all.size() == 11);
  CHECK(std::set<std::size_t>(all.begin(), all.end()).size() == 11);  // disjoint, and covers it

  auto three = random_split(data, std::vector<double>{0.6, 0.2, 0.2}, 1);
  CHECK(three[0].size() == 7);
  CHECK(three[1].size() == 2);
  CHECK(three[2].size() == 2);

  auto counts = random_split(data, {3, 4}, 1);
  CHECK(counts[0].size() == 3);
  CHECK(counts[1].size() == 4);
  auto counted = covered(counts);
  CHECK(counted.size() == 7);
  CHECK(std::set<std::size_t>(counted.begin(), counted.end()).size() == 7);

  CHECK(random_split(data, {0.5, 0.5}, 1)[0].indices() == halves[0].indices());
  CHECK(random_split(data, {0.5, 0.5}, 2)[0].indices() != halves[0].indices());
  CHECK(halves[1].get(0).at("target").item<std::int64_t>() ==
        static_cast<std::int64_t>(halves[1].indices()[0]));

  CHECK(tfx::error_of<std::invalid_argument>([&] { random_split(data, {0.5, 0.4}, 1); }) ==
        "random_split: fractions must sum to 1, got 0.900000");
  CHECK(tfx::error_of<std::invalid_argument>([&] { random_split(data, {1.5, -0.5}, 1); }) ==
        "random_split: fractions[0] must be in [0, 1], got 1.500000");
  CHECK(tfx::error_of<std::invalid_argument>([&] { random_split(data, {6, 6}, 1); }) ==
        "random_split: counts must sum to at most the dataset's size 11, got 12");
  CHECK(tfx::error_of<std::invalid_argument>([&] { random_split(data, {-1, 6}, 1); }) ==
        "random_split: counts[0] must be >= 0, got -1");

  DataLoader train(halves[0], {.batch_size = 2});
  CHECK(train.size() == 3);
}

TEST_CASE("a TrainingEpochRunner runs an epoch from a DataLoader and sees num_batches",
          "[data][runners]") {
  torch::manual_seed(0);
  tfx::Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.01);
  std::vector<std::vector<std::int64_t>> rows;
  TrainingEpochRunner runner(sgd, {}, CounterProbeForData{&rows});
  auto x = torch::randn({10, 2});
  tensor_dataset data{{"input", x}, {"target", x.sum(1, true)}};
  DataLoader loader(data, {.batch_size = 4, .shuffle = true, .seed = 1});
  auto result = runner.run_epoch(model, loader, 0, tfx::mse);
  CHECK(result.batches == 3);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::int64_t>{0, 0, 3});
  CHECK(rows[2] == std::vector<std::int64_t>{0, 2, 3});
  CHECK(loader.batches_yielded() == 3);
  runner.run_epoch(model, loader, 1, tfx::mse);
  CHECK(loader.epoch() == 1);

  // The Trainer takes it as its training and validation loaders.
  DataLoader val(data, {.batch_size = 5});
  ValidationEpochRunner validate(inference_options{});
  Trainer trainer(model, runner, validate, trainer_options{.epochs = 2});
  auto fitted = trainer.fit(loader, val, tfx::mse);
  CHECK(fitted.completed_epochs == 2);
  CHECK(loader.batches_yielded() == 3);  // its last epoch ran to the end
  CHECK(rows.size() == 12);
}

TEST_CASE("pin_memory does nothing without a CUDA device, as PyTorch's", "[data]") {
  if (torch::cuda::is_available())
    HOOKFORGE_SKIP("a CUDA device is present: the [cuda] case checks pinning");
  auto x = torch::randn({6, 2});
  hookforge::DataLoader pinned(hookforge::tensor_dataset{{"input", x}},
                               {.batch_size = 4, .pin_memory = true});
  std::vector<torch::Tensor> batches;
  for (const auto& batch : pinned) batches.push_back(batch.at("input"));
  REQUIRE(batches.size() == 2);
  CHECK_FALSE(batches[0].is_pinned());
  CHECK(torch::equal(torch::cat(batches), x));
}

namespace {
/// A LibTorch dataset as a user writes one: example i is (data [1, 2] filled with i, target i).
struct torch_numbered : torch::data::datasets::Dataset<torch_numbered> {
  torch::data::Example<> get(std::size_t i) override {
    return {torch::full({1, 2}, static_cast<double>(i)),
            torch::tensor(static_cast<std::int64_t>(i))};
  }
  torch::optional<std::size_t> size() const override { return 6; }  // c10::optional in 1.13
};
}  // namespace

TEST_CASE("example_dataset: a LibTorch dataset of Example<> gives Entry samples", "[data]") {
  STATIC_REQUIRE(dataset<example_dataset<torch_numbered>>);
  example_dataset data(torch_numbered{});
  REQUIRE(data.size() == 6);
  const Entry sample = data.get(4);
  CHECK(sample.names() == std::vector<std::string>{"input", "target"});
  CHECK(torch::equal(sample.at("input"), torch::full({1, 2}, 4.0)));
  CHECK(sample.at("target").item<std::int64_t>() == 4);
  CHECK_THROWS_AS(data.get(6), std::out_of_range);

  // The loader stacks the samples: the targets batch to [B], as LibTorch's Stack<> does.
  DataLoader loader(data, {.batch_size = 4});
  const auto batches = take(loader);
  REQUIRE(batches.size() == 2);
  CHECK(batches[0].at("input").sizes() == torch::IntArrayRef({4, 1, 2}));
  CHECK(orders(batches) == std::vector<std::vector<std::int64_t>>{{0, 1, 2, 3}, {4, 5}});

  example_dataset named(torch_numbered{}, {.data = "image", .target = "label"});
  CHECK(named.get(1).names() == std::vector<std::string>{"image", "label"});
  CHECK_THROWS_AS(example_dataset(torch_numbered{}, {.data = "x", .target = "x"}),
                  std::invalid_argument);

  // A per-example transform, as map() gives it: (i - 1) / 2.
  example_dataset normalized(torch_numbered{}.map(torch::data::transforms::Normalize<>(1.0, 2.0)));
  CHECK(torch::allclose(normalized.get(3).at("input").flatten(), torch::full({2}, 1.0)));
}
