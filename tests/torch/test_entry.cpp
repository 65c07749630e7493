// Tests for hookforge/torch/data/entry.hpp: the Entry batch type and call_model, and what a
// Trainer says of a model that is a plain callable.
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

// torch before catch: with glog, torch defines a CHECK macro that Catch's must replace.
#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"
#include "skip.hpp"

using hookforge::Entry;

namespace {

// (a) module holders: forward(const Entry&) -> Entry, forward(Entry) -> Entry,
//     forward(const Entry&) -> Tensor.
struct TwoHeadsImpl : torch::nn::Module {
  TwoHeadsImpl() : linear(register_module("linear", torch::nn::Linear(3, 2))) {}
  Entry forward(const Entry& in) {
    auto y = linear(in.at("input"));
    return Entry{{"output", y}, {"features", in.at("input") * 2}};
  }
  torch::nn::Linear linear;
};
TORCH_MODULE(TwoHeads);

struct ByValueImpl : torch::nn::Module {
  Entry forward(Entry in) {
    in.set("output", in.at("input") + 1);
    return in;
  }
};
TORCH_MODULE(ByValue);

struct TensorOutImpl : torch::nn::Module {
  torch::Tensor forward(const Entry& in) { return in.at("input").sum(1); }
};
TORCH_MODULE(TensorOut);

// A plain object with a forward member (not a module).
struct PlainForward {
  Entry forward(const Entry& in) const { return Entry{{"output", in.at("input") * 3}}; }
};

}  // namespace

static_assert(hookforge::entry_model<TwoHeads>);
static_assert(hookforge::entry_model<ByValue>);
static_assert(hookforge::entry_model<TensorOut>);
static_assert(hookforge::entry_model<PlainForward>);
static_assert(hookforge::entry_model<std::function<Entry(const Entry&)>>);
static_assert(hookforge::entry_model<std::function<torch::Tensor(Entry)>>);
static_assert(!hookforge::entry_model<int>);
static_assert(!hookforge::entry_model<std::function<int(const Entry&)>>);
static_assert(!hookforge::entry_model<std::function<Entry(int)>>);
static_assert(!hookforge::entry_model<torch::nn::Linear>);  // forward(Tensor), not Entry

TEST_CASE("Entry keeps fields in insertion order", "[entry]") {
  Entry e{{"target", torch::zeros({4})}, {"input", torch::ones({4, 3})}};
  e.set("weight", torch::ones({4}));
  CHECK(e.names() == std::vector<std::string>{"target", "input", "weight"});
  CHECK(e.size() == 3);
  CHECK_FALSE(e.empty());

  std::vector<std::string> seen;
  for (const auto& [name, tensor] : e) {
    seen.push_back(name);
    CHECK(tensor.defined());
  }
  CHECK(seen == e.names());

  // Iteration gives mutable tensors (names stay const).
  for (auto& [name, tensor] : e) tensor = tensor + 1;
  CHECK(torch::equal(e.at("target"), torch::ones({4})));
}

TEST_CASE("Entry lookup: operator[], at, contains, set, erase", "[entry]") {
  Entry e{{"input", torch::ones({2, 3})}};
  CHECK(e.contains("input"));
  CHECK_FALSE(e.contains("output"));

  // operator[] inserts like std::map; set overwrites in place.
  e["output"] = torch::zeros({2});
  CHECK(e.contains("output"));
  e.set("input", torch::full({2, 3}, 7.0));
  CHECK(e.names() == std::vector<std::string>{"input", "output"});
  CHECK(e.at("input").max().item<double>() == 7.0);

  const Entry& ce = e;
  CHECK(ce.at("output").sizes() == torch::IntArrayRef{2});
  CHECK(ce.find("nope") == ce.end());

  CHECK(e.erase("input"));
  CHECK_FALSE(e.erase("input"));
  CHECK(e.names() == std::vector<std::string>{"output"});
}

TEST_CASE("Entry::at on a missing field names it and lists the present ones", "[entry]") {
  const Entry e{{"input", torch::ones({1})}, {"target", torch::ones({1})}};
  CHECK_THROWS_AS(e.at("output"), std::out_of_range);
  try {
    (void)e.at("output");
  } catch (const std::out_of_range& ex) {
    const std::string msg = ex.what();
    CHECK_THAT(msg, Catch::Contains("'output'"));
    CHECK_THAT(msg, Catch::Contains("[input, target]"));
  }
}

TEST_CASE("Entry rejects duplicate names in its initializer list", "[entry]") {
  CHECK_THROWS_AS((Entry{{"x", torch::ones({1})}, {"x", torch::ones({1})}}), std::invalid_argument);
}

TEST_CASE("Entry copies and assignments are shallow (tensors shared)", "[entry]") {
  Entry a{{"x", torch::ones({2})}};
  Entry b;
  b = a;
  CHECK(b.at("x").is_same(a.at("x")));
  Entry c = std::move(b);
  CHECK(c.at("x").is_same(a.at("x")));
  c = Entry{{"y", torch::zeros({1})}};
  CHECK(c.names() == std::vector<std::string>{"y"});
}

TEST_CASE("Entry::merge adds and overwrites the model's fields", "[entry]") {
  Entry batch{{"input", torch::ones({2, 3})}, {"output", torch::zeros({1})}};
  const Entry out{{"output", torch::full({2}, 5.0)}, {"aux", torch::ones({2})}};
  batch.merge(out);
  CHECK(batch.names() == std::vector<std::string>{"input", "output", "aux"});
  CHECK(batch.at("output").is_same(out.at("output")));

  batch.merge(Entry{{"aux", torch::zeros({2})}, {"extra", torch::ones({3})}});
  CHECK(batch.names() == std::vector<std::string>{"input", "output", "aux", "extra"});
  CHECK(batch.at("aux").sum().item<double>() == 0.0);

  batch.merge(batch);  // self-merge is a no-op
  CHECK(batch.size() == 4);
}

TEST_CASE("Entry::to moves defined tensors, keeps dtype and undefined fields", "[entry]") {
  Entry e{{"input", torch::ones({2, 3}, torch::kFloat64)}, {"mask", torch::Tensor()}};
  const Entry cpu = e.to(torch::kCPU);
  CHECK(cpu.at("input").is_same(e.at("input")));  // already there: shared, not copied
  CHECK(cpu.at("input").scalar_type() == torch::kFloat64);
  CHECK_FALSE(cpu.at("mask").defined());
  CHECK(cpu.names() == e.names());
}

TEST_CASE("CUDA: Entry::to copies pinned batches to the device without blocking", "[entry][cuda]") {
  HOOKFORGE_REQUIRE_CUDA();
  Entry e{{"input", torch::ones({2, 3}, torch::kFloat64).pin_memory()}, {"mask", torch::Tensor()}};
  const Entry gpu = e.to(torch::Device(torch::kCUDA, 0), /*non_blocking=*/true);
  CHECK(gpu.at("input").is_cuda());
  CHECK(gpu.at("input").scalar_type() == torch::kFloat64);
  CHECK_FALSE(gpu.at("mask").defined());
  CHECK(torch::equal(gpu.at("input").cpu(), e.at("input")));
}

TEST_CASE("Entry::batch_size is the first dimension every batch-major field shares", "[entry]") {
  CHECK(Entry{{"input", torch::ones({8, 3})}, {"target", torch::ones({8})}}.batch_size() == 8);
  // 0-dimensional and undefined fields have no batch dimension and are not counted.
  CHECK(Entry{{"loss", torch::tensor(1.0)}, {"x", torch::Tensor()}, {"input", torch::ones({4, 2})}}
            .batch_size() == 4);
  CHECK_THROWS_AS(Entry{}.batch_size(), std::logic_error);
  CHECK_THROWS_WITH((Entry{{"loss", torch::tensor(1.0)}, {"x", torch::Tensor()}}.batch_size()),
                    Catch::Contains("no field has a batch dimension") &&
                        Catch::Contains("[loss: 0-dimensional, x: undefined]"));
}

TEST_CASE("Entry::batch_size rejects fields that disagree whatever their order", "[entry]") {
  // The first field is not batch-major: the order must not decide the batch size.
  Entry e{{"palette", torch::ones({3, 16})},
          {"input", torch::ones({8, 3})},
          {"target", torch::ones({8})}};
  CHECK_THROWS_WITH(e.batch_size(), Catch::Contains("disagree on the batch size") &&
                                        Catch::Contains("[palette: 3, input: 8, target: 8]") &&
                                        Catch::Contains("hookforge::not_batched"));
  Entry reordered{{"input", torch::ones({8, 3})}, {"palette", torch::ones({3, 16})}};
  CHECK_THROWS_AS(reordered.batch_size(), std::logic_error);
}

TEST_CASE("Entry: a field set with not_batched is left out of the batch size", "[entry]") {
  Entry e{{"input", torch::ones({8, 3})}};
  e.set("palette", torch::ones({3, 16}), hookforge::not_batched);
  CHECK(e.batch_size() == 8);
  CHECK(e.is_batched("input"));
  CHECK_FALSE(e.is_batched("palette"));
  CHECK_FALSE(e.is_batched("missing"));

  // The mark travels with the field: copies, to(), merge into another entry.
  CHECK(Entry(e).batch_size() == 8);
  CHECK_FALSE(e.to(torch::kCPU).is_batched("palette"));
  Entry batch{{"palette", torch::ones({8})}, {"target", torch::ones({8})}};
  batch.merge(e);
  CHECK_FALSE(batch.is_batched("palette"));
  CHECK(batch.batch_size() == 8);
  Entry moved_into{{"target", torch::ones({8})}};
  moved_into.merge(Entry(e));
  CHECK_FALSE(moved_into.is_batched("palette"));

  // A plain set makes the field batch-major again; erase forgets the mark.
  e.set("palette", torch::ones({3, 16}));
  CHECK(e.is_batched("palette"));
  CHECK_THROWS_AS(e.batch_size(), std::logic_error);
  e.set("palette", torch::ones({3, 16}), hookforge::not_batched);
  e.erase("palette");
  e["palette"] = torch::ones({8});
  CHECK(e.is_batched("palette"));
  CHECK(e.batch_size() == 8);

  // With every field marked, there is no batch dimension.
  Entry only{{"x", torch::ones({2})}};
  only.set("x", torch::ones({2}), hookforge::not_batched);
  CHECK_THROWS_WITH(only.batch_size(), Catch::Contains("[x: not batched]"));
}

TEST_CASE("call_model: module holders with forward(const Entry&) / forward(Entry)", "[entry]") {
  const Entry in{{"input", torch::ones({4, 3})}};

  TwoHeads two;
  const Entry out = hookforge::call_model(two, in);
  CHECK(out.names() == std::vector<std::string>{"output", "features"});
  CHECK(out.at("output").sizes() == torch::IntArrayRef({4, 2}));

  ByValue by_value;
  const Entry out2 = hookforge::call_model(by_value, in);
  CHECK(torch::equal(out2.at("output"), torch::full({4, 3}, 2.0)));
  CHECK(in.names() == std::vector<std::string>{"input"});  // input untouched

  std::shared_ptr<ByValueImpl> as_pointer = by_value.ptr();
  CHECK(hookforge::call_model(as_pointer, in).contains("output"));

  PlainForward plain;
  CHECK(torch::equal(hookforge::call_model(plain, in).at("output"), torch::full({4, 3}, 3.0)));
}

TEST_CASE("call_model: a callable Entry -> Entry", "[entry]") {
  auto model = [](const Entry& e) { return Entry{{"output", e.at("input") * 2}}; };
  const Entry out = hookforge::call_model(model, Entry{{"input", torch::ones({2})}});
  CHECK(torch::equal(out.at("output"), torch::full({2}, 2.0)));

  std::function<Entry(Entry)> fn = [](Entry e) {
    e.set("output", e.at("input"));
    return e;
  };
  CHECK(hookforge::call_model(fn, Entry{{"input", torch::ones({2})}}).contains("output"));
}

TEST_CASE("call_model: a tensor result becomes the \"output\" field", "[entry]") {
  auto model = [](const Entry& e) { return e.at("input").mean(); };
  const Entry out = hookforge::call_model(model, Entry{{"input", torch::ones({2, 2})}});
  CHECK(out.names() == std::vector<std::string>{"output"});
  CHECK(out.at("output").item<double>() == 1.0);

  TensorOut module;
  const Entry out2 = hookforge::call_model(module, Entry{{"input", torch::ones({2, 3})}});
  CHECK(torch::equal(out2.at("output"), torch::full({2}, 3.0)));

  // The trainer's pattern: the model's fields merged into the batch.
  Entry batch{{"input", torch::ones({2, 3})}, {"target", torch::zeros({2})}};
  batch.merge(hookforge::call_model(module, batch));
  CHECK(batch.names() == std::vector<std::string>{"input", "target", "output"});
}

TEST_CASE("forward_into merges the model's output into the batch, as merge(call_model(...))",
          "[entry]") {
  TensorOut module;
  Entry batch{{"input", torch::ones({2, 3})}, {"target", torch::zeros({2})}};
  hookforge::forward_into(module, batch);
  CHECK(batch.names() == std::vector<std::string>{"input", "target", "output"});
  CHECK(torch::equal(batch.at("output"), torch::full({2}, 3.0)));

  // An Entry result: every field, overwriting same-named ones in place, marks kept.
  auto model = [](const Entry& e) {
    Entry out{{"input", e.at("input") * 2}};
    out.set("scale", torch::ones({1}), hookforge::not_batched);
    return out;
  };
  hookforge::forward_into(model, batch);
  CHECK(batch.names() == std::vector<std::string>{"input", "target", "output", "scale"});
  CHECK(torch::equal(batch.at("input"), torch::full({2, 3}, 2.0)));
  CHECK_FALSE(batch.is_batched("scale"));
  CHECK(batch.batch_size() == 2);
}

TEST_CASE("Entry(other, extra): a copy with room for more fields, marks kept", "[entry]") {
  Entry original{{"input", torch::ones({4, 2})}};
  original.set("palette", torch::ones({3}), hookforge::not_batched);
  Entry copy(original, 1);
  CHECK(copy.names() == original.names());
  CHECK(copy.at("input").is_same(original.at("input")));
  CHECK_FALSE(copy.is_batched("palette"));
  copy.set("output", torch::zeros({4}));
  CHECK(original.size() == 2);
  CHECK(copy.batch_size() == 4);
}

TEST_CASE("A Trainer given a callable model warns once, and refuses to save a checkpoint") {
  struct Net : torch::nn::Module {
    torch::nn::Linear linear = register_module("linear", torch::nn::Linear(1, 1));
    torch::Tensor forward(const Entry& e) { return linear(e.at("input")); }
  } net;
  torch::optim::SGD sgd(net.parameters(), 0.1);
  hookforge::TrainingEpochRunner train(sgd, {});
  std::vector<std::string> warnings;
  auto previous =
      hookforge::set_warning_sink([&](std::string_view text) { warnings.emplace_back(text); });
  auto lambda = [&](const Entry& e) { return net.forward(e); };
  hookforge::Trainer hidden(lambda, train, hookforge::no_validation{}, {});
  hookforge::Trainer module(net, train, hookforge::no_validation{}, {});
  hookforge::set_warning_sink(std::move(previous));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with(
      "Trainer: the model is a callable without a torch::nn::Module (a lambda?): validation "
      "cannot put it in eval() mode, and save_checkpoint refuses"));

  // Its checkpoint would resume with weights it does not hold: refused, nothing written.
  const auto file = std::filesystem::temp_directory_path() / "hookforge_callable_model.ckpt";
  std::filesystem::remove(file);
  CHECK_THROWS_WITH(hidden.save_checkpoint(file),
                    Catch::Contains("the checkpoint would hold none of its weights"));
  CHECK_FALSE(std::filesystem::exists(file));
}
