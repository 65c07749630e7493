// Tests for hookforge/torch/io/checkpoint.hpp and hookforge/torch/io/atomic_file.hpp.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

// torch before catch: with glog, torch defines a CHECK macro that Catch's must replace.
#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/pretrained.hpp"
#include "hookforge/torch/models/freeze.hpp"

#include "file_testing.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;
using hookforge::checkpoint_error;
using hookforge::checkpoint_reader;
using hookforge::checkpoint_writer;

namespace {

using tfx::error_of;

torch::nn::Sequential make_model(std::uint64_t seed) {
  torch::manual_seed(seed);
  return torch::nn::Sequential(torch::nn::Linear(4, 8), torch::nn::BatchNorm1d(8),
                               torch::nn::Tanh(), torch::nn::Linear(8, 2));
}

// Two groups (first and last Linear) unless the optimizer wants one (LBFGS).
std::vector<torch::optim::OptimizerParamGroup> groups_of(torch::nn::Sequential& m, bool two) {
  std::vector<torch::Tensor> first, last;
  for (const auto& p : m->named_parameters())
    (p.key()[0] == '3' && two ? last : first).push_back(p.value());
  std::vector<torch::optim::OptimizerParamGroup> groups{torch::optim::OptimizerParamGroup(first)};
  if (two) groups.emplace_back(last);
  return groups;
}

void train(torch::nn::Sequential& m, torch::optim::Optimizer& opt, int steps) {
  torch::manual_seed(7);
  const auto x = torch::randn({16, 4});
  const auto y = torch::randn({16, 2});
  for (int i = 0; i < steps; ++i)
    opt.step([&] {
      opt.zero_grad();
      auto loss = torch::mse_loss(m->forward(x), y);
      loss.backward();
      return loss;
    });
}

void check_same_tensors(const torch::OrderedDict<std::string, torch::Tensor>& a,
                        const torch::OrderedDict<std::string, torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].key());
    CHECK(a[i].key() == b[i].key());
    CHECK(torch::equal(a[i].value(), b[i].value()));
  }
}

// Train A, change a group's lr (as a scheduler would), save, train on. Build B with other
// weights and other options, let it take a step, load, train on: B must end bit-identical
// to A, with A's options in every group and in the defaults.
template <class Opt, class Options>
void check_resume_is_exact(const Options& trained, const Options& fresh, bool two_groups = true) {
  tfx::temp_dir dir;
  const auto file = dir.path / "run.ckpt";

  auto a = make_model(1);
  Opt opt_a(groups_of(a, two_groups), trained);
  train(a, opt_a, 3);
  auto& last_group = opt_a.param_groups().back();
  last_group.options().set_lr(last_group.options().get_lr() * 0.5);
  checkpoint_writer{}.add_module("model", a).add_optimizer("optimizer", opt_a).save(file);
  train(a, opt_a, 3);

  auto b = make_model(2);
  Opt opt_b(groups_of(b, two_groups), fresh);
  train(b, opt_b, 1);  // B's own state must be replaced, not mixed in
  checkpoint_reader ckpt(file);
  ckpt.load_module("model", b);
  ckpt.load_optimizer("optimizer", opt_b);

  REQUIRE(opt_b.param_groups().size() == opt_a.param_groups().size());
  for (std::size_t i = 0; i < opt_a.param_groups().size(); ++i) {
    INFO("param group " << i);
    CHECK(static_cast<const Options&>(opt_b.param_groups()[i].options()) ==
          static_cast<const Options&>(opt_a.param_groups()[i].options()));
  }
  CHECK(opt_b.param_groups().back().options().get_lr() == trained.lr() * 0.5);
  // (not `trained` itself: LBFGS fills in max_eval in its defaults)
  CHECK(static_cast<const Options&>(opt_b.defaults()) ==
        static_cast<const Options&>(opt_a.defaults()));
  CHECK_FALSE(static_cast<const Options&>(opt_b.defaults()) == fresh);

  train(b, opt_b, 3);
  check_same_tensors(a->named_parameters(), b->named_parameters());
  check_same_tensors(a->named_buffers(), b->named_buffers());
}

}  // namespace

TEST_CASE("checkpoint: module round trip (parameters and buffers)", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "model.ckpt";
  auto a = make_model(1);
  a->forward(torch::randn({5, 4}));  // moves the BatchNorm running stats
  checkpoint_writer{}.add_module("model", a).save(file);

  auto b = make_model(2);
  const auto b_weight = b[0]->as<torch::nn::Linear>()->weight;  // same tensor, updated in place
  checkpoint_reader(file).load_module("model", b);
  check_same_tensors(a->named_parameters(), b->named_parameters());
  check_same_tensors(a->named_buffers(), b->named_buffers());
  CHECK(b_weight.is_same(b[0]->as<torch::nn::Linear>()->weight));
  CHECK(b_weight.requires_grad());

  // A bare Module reference works too.
  torch::nn::Linear c(4, 8);
  checkpoint_writer{}.add_module("linear", *c).save(dir.path / "linear.ckpt");
  torch::nn::Linear d(4, 8);
  checkpoint_reader(dir.path / "linear.ckpt").load_module("linear", *d);
  CHECK(torch::equal(c->weight, d->weight));
}

TEST_CASE("checkpoint: Adam resumes exactly, param-group options included", "[checkpoint]") {
  check_resume_is_exact<torch::optim::Adam>(
      torch::optim::AdamOptions(0.01).betas({0.8, 0.95}).eps(1e-6).weight_decay(1e-3).amsgrad(true),
      torch::optim::AdamOptions(0.5));
}

TEST_CASE("checkpoint: SGD with momentum resumes exactly, options included", "[checkpoint]") {
  check_resume_is_exact<torch::optim::SGD>(
      torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-4),
      torch::optim::SGDOptions(0.3));
  check_resume_is_exact<torch::optim::SGD>(
      torch::optim::SGDOptions(0.05).momentum(0.5).dampening(0.1), torch::optim::SGDOptions(0.3));
}

TEST_CASE("checkpoint: AdamW, RMSprop, Adagrad and LBFGS resume exactly", "[checkpoint]") {
  SECTION("AdamW") {
    check_resume_is_exact<torch::optim::AdamW>(
        torch::optim::AdamWOptions(0.01).betas({0.85, 0.99}).weight_decay(0.05),
        torch::optim::AdamWOptions(0.2));
  }
  SECTION("RMSprop") {
    check_resume_is_exact<torch::optim::RMSprop>(
        torch::optim::RMSpropOptions(0.01).alpha(0.9).momentum(0.5).centered(true),
        torch::optim::RMSpropOptions(0.1));
  }
  SECTION("Adagrad") {
    check_resume_is_exact<torch::optim::Adagrad>(
        torch::optim::AdagradOptions(0.1).lr_decay(0.01).initial_accumulator_value(0.1),
        torch::optim::AdagradOptions(0.5));
  }
  SECTION("LBFGS (one param group)") {
    check_resume_is_exact<torch::optim::LBFGS>(
        torch::optim::LBFGSOptions(0.5).max_iter(3).history_size(5).line_search_fn("strong_wolfe"),
        torch::optim::LBFGSOptions(1).max_iter(2), /*two_groups=*/false);
  }
}

TEST_CASE("checkpoint: state_dict sections keep IValue types", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "state.ckpt";
  const auto tensor = torch::arange(6, torch::kFloat64).reshape({2, 3});
  hookforge::state_map state{{"step", c10::IValue(std::int64_t{1234567890123})},
                             {"best loss", c10::IValue(0.125)},
                             {"ema.shadow/0", c10::IValue(tensor)},
                             {"name", c10::IValue(std::string("cosine"))},
                             {"enabled", c10::IValue(true)},
                             {"milestones", c10::IValue(std::vector<std::int64_t>{3, 7})},
                             {"nothing", c10::IValue()}};
  checkpoint_writer{}.add_state("scheduler", state).add_state("empty", {}).save(file);

  checkpoint_reader ckpt(file);
  const auto back = ckpt.load_state("scheduler");
  REQUIRE(back.size() == state.size());
  CHECK(back.at("step").toInt() == 1234567890123);
  CHECK(back.at("best loss").toDouble() == 0.125);
  CHECK(torch::equal(back.at("ema.shadow/0").toTensor(), tensor));
  CHECK(back.at("ema.shadow/0").toTensor().scalar_type() == torch::kFloat64);
  CHECK(back.at("name").toStringRef() == "cosine");
  CHECK(back.at("enabled").toBool());
  CHECK(back.at("milestones").toIntVector() == std::vector<std::int64_t>{3, 7});
  CHECK(back.at("nothing").isNone());
  CHECK(ckpt.load_state("empty").empty());
}

TEST_CASE("checkpoint: counters, doubles, section listing", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "c.ckpt";
  checkpoint_writer w;
  w.add_int("step", -42).add_double("best", 0.1).add_int("epoch", std::int64_t{1} << 40);
  CHECK(w.sections() == std::vector<std::string>{"step", "best", "epoch"});
  CHECK_THROWS_AS(w.add_int("step", 1), std::invalid_argument);
  w.save(file);
  w.save(dir.path / "again.ckpt");  // saving twice is fine

  checkpoint_reader ckpt(file, torch::Device(torch::kCPU));
  CHECK(ckpt.sections() == std::vector<std::string>{"step", "best", "epoch"});
  CHECK(ckpt.contains("best"));
  CHECK_FALSE(ckpt.contains("nope"));
  CHECK(ckpt.kind("best") == "double");
  CHECK(ckpt.load_int("step") == -42);
  CHECK(ckpt.load_double("best") == 0.1);
  CHECK(ckpt.load_int("epoch") == std::int64_t{1} << 40);
  CHECK(checkpoint_reader(dir.path / "again.ckpt").load_int("step") == -42);
}

TEST_CASE("checkpoint: RNG state restores the random stream", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "rng.ckpt";
  torch::manual_seed(3);
  (void)torch::randn({7});
  checkpoint_writer{}.add_rng().save(file);
  const auto a = torch::rand({5});
  const auto an = torch::randn({3});
  const auto ai = torch::randint(1000, {4});

  torch::manual_seed(99);
  checkpoint_reader(file).load_rng();
  CHECK(torch::equal(torch::rand({5}), a));
  CHECK(torch::equal(torch::randn({3}), an));
  CHECK(torch::equal(torch::randint(1000, {4}), ai));
}

TEST_CASE("CUDA: checkpoint RNG state restores each device's random stream", "[checkpoint][cuda]") {
  HOOKFORGE_REQUIRE_CUDA();
  tfx::temp_dir dir;
  const auto file = dir.path / "rng.ckpt";
  torch::manual_seed(3);
  checkpoint_writer{}.add_rng().save(file);
  std::vector<torch::Tensor> cuda_a;
  const auto devices = static_cast<int>(torch::cuda::device_count());  // size_t in 1.13
  for (int i = 0; i < devices; ++i)
    cuda_a.push_back(
        torch::rand({5}, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(i))));

  torch::manual_seed(99);
  checkpoint_reader(file).load_rng();
  for (std::size_t i = 0; i < cuda_a.size(); ++i)
    CHECK(torch::equal(
        torch::rand({5}, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(i))),
        cuda_a[i]));
}

TEST_CASE("checkpoint: loading into a different model names the tensors and shapes",
          "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "small.ckpt";
  checkpoint_writer{}.add_module("model", torch::nn::Linear(4, 3)).save(file);
  checkpoint_reader ckpt(file);

  torch::nn::Linear wider(4, 5);
  const auto before = wider->weight.clone();
  const auto msg = error_of([&] { ckpt.load_module("model", wider); });
  CHECK_THAT(msg, Catch::Contains(file.string()));
  CHECK_THAT(msg, Catch::Contains("parameter 'weight': the module expects shape [5, 4], "
                                  "the checkpoint has [3, 4]"));
  CHECK_THAT(msg, Catch::Contains("parameter 'bias': the module expects shape [5], "
                                  "the checkpoint has [3]"));
  CHECK(torch::equal(wider->weight, before));  // nothing copied

  const auto seq_file = dir.path / "seq.ckpt";
  checkpoint_writer{}
      .add_module("model", torch::nn::Sequential(torch::nn::Linear(4, 3)))
      .save(seq_file);
  torch::nn::Sequential deeper(torch::nn::Linear(4, 3), torch::nn::Linear(3, 2));
  const auto missing = error_of([&] { checkpoint_reader(seq_file).load_module("model", deeper); });
  CHECK_THAT(missing,
             Catch::Contains("parameter '1.weight' (shape [2, 3]) is missing from the checkpoint"));
  CHECK_THAT(missing, Catch::Contains("parameter '1.bias' (shape [2]) is missing"));

  const auto deep_file = dir.path / "deep.ckpt";
  checkpoint_writer{}.add_module("model", deeper).save(deep_file);
  torch::nn::Sequential shallow(torch::nn::Linear(4, 3));
  const auto extra = error_of([&] { checkpoint_reader(deep_file).load_module("model", shallow); });
  CHECK_THAT(extra,
             Catch::Contains(
                 "the checkpoint has parameter '1.weight' (shape [2, 3]) that the module lacks"));
  CHECK_THAT(extra, Catch::Contains(deep_file.string()));
}

TEST_CASE("checkpoint: optimizer mismatches are reported", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "opt.ckpt";
  torch::nn::Linear model(4, 3);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(0.1));
  checkpoint_writer{}.add_optimizer("optimizer", adam).save(file);
  checkpoint_reader ckpt(file);

  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  const auto wrong_type = error_of([&] { ckpt.load_optimizer("optimizer", sgd); });
  CHECK_THAT(wrong_type, Catch::Contains("torch::optim::Adam"));
  CHECK_THAT(wrong_type, Catch::Contains("torch::optim::SGD"));
  CHECK_THAT(wrong_type, Catch::Contains(file.string()));

  torch::nn::Linear other(4, 6);
  torch::optim::Adam other_adam(other->parameters(), torch::optim::AdamOptions(0.1));
  const auto wrong_shape = error_of([&] { ckpt.load_optimizer("optimizer", other_adam); });
  CHECK_THAT(wrong_shape, Catch::Contains("parameter group 0, parameter 0: the optimizer expects "
                                          "shape [6, 4], the checkpoint has [3, 4]"));

  torch::optim::Adam fewer({model->weight}, torch::optim::AdamOptions(0.1));
  CHECK_THAT(error_of([&] { ckpt.load_optimizer("optimizer", fewer); }),
             Catch::Contains("has 2 parameter(s) in the checkpoint, 1 in the optimizer"));
}

TEST_CASE("checkpoint: missing sections and wrong kinds", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "s.ckpt";
  checkpoint_writer{}.add_module("model", torch::nn::Linear(2, 2)).add_int("step", 5).save(file);
  checkpoint_reader ckpt(file);

  const auto missing = error_of([&] { (void)ckpt.load_int("epoch"); });
  CHECK_THAT(missing, Catch::Contains(file.string()));
  CHECK_THAT(missing, Catch::Contains("no section 'epoch'"));
  CHECK_THAT(missing, Catch::Contains("model (module), step (int)"));

  CHECK_THAT(error_of([&] { ckpt.load_rng(); }), Catch::Contains("no section 'rng'"));
  CHECK_THAT(error_of([&] { (void)ckpt.load_double("step"); }),
             Catch::Contains("section 'step' is of kind 'int', not 'double'"));
}

TEST_CASE("checkpoint: unreadable files name the path", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto nope = dir.path / "does_not_exist.ckpt";
  const auto msg = error_of([&] { checkpoint_reader{nope}; });
  CHECK_THAT(msg, Catch::Contains(nope.string()));
  CHECK_THAT(msg, Catch::Contains("no such file"));

  const auto garbage = dir.path / "garbage.ckpt";
  hookforge::write_file_atomically(garbage, "this is not a zip archive");
  const auto bad = error_of([&] { checkpoint_reader{garbage}; });
  CHECK_THAT(bad, Catch::Contains(garbage.string()));
  CHECK_THAT(bad, Catch::Contains("cannot read the file"));

  const auto plain = dir.path / "plain.pt";
  torch::save(torch::ones({2}), plain.string());
  CHECK_THAT(error_of([&] { checkpoint_reader{plain}; }),
             Catch::Contains("not a hookforge checkpoint"));
}

TEST_CASE("atomic file: a throwing writer leaves the previous file and no temp", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "out.txt";
  hookforge::write_file_atomically(file, "old contents");
  CHECK(tfx::read_bytes(file) == "old contents");

  CHECK_THROWS_WITH(hookforge::write_file_atomically(file,
                                                     [](const fs::path& tmp) {
                                                       std::ofstream(tmp) << "half of the new";
                                                       throw std::runtime_error("disk on fire");
                                                     }),
                    "disk on fire");
  CHECK(tfx::read_bytes(file) == "old contents");
  CHECK(dir.files() == std::vector<std::string>{"out.txt"});

  // A writer that does not create the file is an error too; success replaces the file.
  CHECK_THROWS_AS(hookforge::write_file_atomically(file, [](const fs::path&) {}),
                  fs::filesystem_error);
  CHECK(tfx::read_bytes(file) == "old contents");
  hookforge::write_file_atomically(file, [](const fs::path& tmp) { std::ofstream(tmp) << "new"; });
  CHECK(tfx::read_bytes(file) == "new");
  CHECK(dir.files() == std::vector<std::string>{"out.txt"});

  CHECK_THROWS_AS(hookforge::write_file_atomically(dir.path / "no_dir" / "x.txt", "x"),
                  fs::filesystem_error);
}

TEST_CASE("checkpoint: a failed save keeps the previous checkpoint intact", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "last.ckpt";
  checkpoint_writer{}.add_int("step", 1).save(file);
  const auto previous = tfx::read_bytes(file);

  // Half a new checkpoint written, then the writer dies.
  const auto other = dir.path / "other.ckpt";
  checkpoint_writer{}.add_int("step", 2).add_module("model", torch::nn::Linear(8, 8)).save(other);
  const auto next = tfx::read_bytes(other);
  fs::remove(other);
  CHECK_THROWS(hookforge::write_file_atomically(file, [&](const fs::path& tmp) {
    std::ofstream(tmp, std::ios::binary) << next.substr(0, next.size() / 2);
    throw std::runtime_error("killed");
  }));
  CHECK(tfx::read_bytes(file) == previous);
  CHECK(checkpoint_reader(file).load_int("step") == 1);
  CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});

  // checkpoint_writer::save itself failing after it created its temp file (torch cannot
  // pickle a Future): same guarantees.
  const hookforge::state_map unpicklable{
      {"future", c10::IValue(c10::make_intrusive<c10::ivalue::Future>(c10::IntType::get()))}};
  const auto msg = error_of(
      [&] { checkpoint_writer{}.add_int("step", 2).add_state("bad", unpicklable).save(file); });
  CHECK_THAT(msg, Catch::Contains("cannot save checkpoint '" + file.string() + "'"));
  CHECK(tfx::read_bytes(file) == previous);
  CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});

  // A save into a missing directory throws and creates nothing.
  CHECK_THROWS(checkpoint_writer{}.add_int("step", 3).save(dir.path / "missing" / "x.ckpt"));
  CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});

  // Overwriting with a good checkpoint replaces it.
  checkpoint_writer{}.add_int("step", 3).save(file);
  CHECK(checkpoint_reader(file).load_int("step") == 3);
  CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});
}

// --- starting weights: load_pretrained, freeze -------------------------------------------------

namespace {
/// A backbone (Sequential: "0.weight", "0.bias", "2.weight", "2.bias") under a head.
struct NetImpl : torch::nn::Module {
  torch::nn::Sequential backbone{torch::nn::Linear(2, 3), torch::nn::ReLU(),
                                 torch::nn::Linear(3, 4)};
  torch::nn::Linear head{4, 1};
  NetImpl() {
    register_module("backbone", backbone);
    register_module("head", head);
  }
  torch::Tensor forward(const torch::Tensor& x) { return head(backbone->forward(x)); }
};
TORCH_MODULE(Net);

bool same_parameters(const torch::nn::Module& a, const torch::nn::Module& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  if (pa.keys() != pb.keys()) return false;
  for (const auto& item : pa)
    if (!torch::equal(item.value(), pb[item.key()])) return false;
  return true;
}
}  // namespace

TEST_CASE("load_pretrained reads a hookforge checkpoint's model section and a torch::save archive",
          "[checkpoint][pretrained]") {
  tfx::temp_dir dir;
  torch::manual_seed(1);
  Net trained;
  checkpoint_writer().add_module("model", trained).add_int("epoch", 3).save(dir.path / "run.pt");
  torch::save(trained, (dir.path / "module.pt").string());

  for (const char* file : {"run.pt", "module.pt"}) {
    torch::manual_seed(2);
    Net fresh;
    REQUIRE(!same_parameters(*fresh, *trained));
    const auto report = hookforge::load_pretrained(*fresh, {.file = dir.path / file});
    CHECK(same_parameters(*fresh, *trained));
    CHECK(report.loaded.size() == 6);
    CHECK((report.missing.empty() && report.unexpected.empty()));
    CHECK_THAT(report.summary(), Catch::StartsWith("loaded 6 of 6 tensors from '"));
    CHECK_THAT(report.summary(), Catch::Contains(std::string(file) == "run.pt"
                                                     ? "(hookforge checkpoint, section 'model')"
                                                     : "(torch::save archive)"));
  }
  // A prefix takes the backbone of a whole network into a backbone alone.
  torch::nn::Sequential backbone{torch::nn::Linear(2, 3), torch::nn::ReLU(),
                                 torch::nn::Linear(3, 4)};
  const auto report = hookforge::load_pretrained(
      *backbone, {.file = dir.path / "module.pt", .prefix = "backbone."});
  CHECK(same_parameters(*backbone, *trained->backbone));
  CHECK(report.loaded == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  // apply = false checks and reports, and copies nothing.
  torch::manual_seed(3);
  Net dry;
  const auto before_weight = dry->head->weight.clone();
  CHECK(hookforge::load_pretrained(*dry, {.file = dir.path / "run.pt"}, /*apply=*/false)
            .loaded.size() == 6);
  CHECK(torch::equal(dry->head->weight, before_weight));
}

TEST_CASE(
    "load_pretrained: a mismatch lists every missing, unexpected and mis-shaped name, and "
    "copies nothing",
    "[checkpoint][pretrained]") {
  tfx::temp_dir dir;
  torch::nn::Sequential saved{torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 4),
                              torch::nn::Linear(4, 5)};
  torch::save(saved, (dir.path / "w.pt").string());
  torch::nn::Sequential other{torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 6)};
  const auto first = other[0]->as<torch::nn::Linear>()->weight.clone();

  const auto message = error_of<std::invalid_argument>(
      [&] { hookforge::load_pretrained(*other, {.file = dir.path / "w.pt"}); });
  CHECK_THAT(message,
             Catch::Contains("w.pt' (torch::save archive) does not fit the model (strict)"));
  CHECK_THAT(message, Catch::Contains("mis-shaped: 2.weight (model [6, 3], file [4, 3]), 2.bias "
                                      "(model [6], file [4])"));
  CHECK_THAT(message, Catch::Contains("not in the model: 3."));
  CHECK_THAT(message, Catch::Contains("3.weight") && Catch::Contains("3.bias"));
  CHECK(torch::equal(other[0]->as<torch::nn::Linear>()->weight, first));

  // Not strict: what matches is loaded, the rest reported; a shape mismatch is still an error.
  torch::nn::Sequential smaller{torch::nn::Linear(2, 3)};
  const auto report =
      hookforge::load_pretrained(*smaller, {.file = dir.path / "w.pt", .strict = false});
  auto unexpected = report.unexpected;
  std::sort(unexpected.begin(), unexpected.end());
  CHECK(unexpected == std::vector<std::string>{"2.bias", "2.weight", "3.bias", "3.weight"});
  CHECK(torch::equal(smaller[0]->as<torch::nn::Linear>()->weight,
                     saved[0]->as<torch::nn::Linear>()->weight));
  torch::nn::Sequential larger{torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 4),
                               torch::nn::Linear(4, 5), torch::nn::Linear(5, 1)};
  const auto missing = error_of<std::invalid_argument>(
      [&] { hookforge::load_pretrained(*larger, {.file = dir.path / "w.pt"}); });
  CHECK_THAT(missing, Catch::Contains("missing from the file: 4.weight, 4.bias"));
  CHECK(hookforge::load_pretrained(*larger, {.file = dir.path / "w.pt", .strict = false}).missing ==
        std::vector<std::string>{"4.weight", "4.bias"});

  std::ofstream(dir.path / "junk.pt") << "not a checkpoint";
  CHECK_THAT(error_of<checkpoint_error>(
                 [&] { hookforge::load_pretrained(*other, {.file = dir.path / "junk.pt"}); }),
             Catch::Contains("junk.pt' is none of the weights files hookforge reads"));
  CHECK_THAT(error_of<checkpoint_error>(
                 [&] { hookforge::load_pretrained(*other, {.file = dir.path / "none.pt"}); }),
             Catch::Contains("none.pt' cannot be opened"));
  checkpoint_writer().add_int("epoch", 1).save(dir.path / "no_model.pt");
  CHECK_THAT(error_of<checkpoint_error>(
                 [&] { hookforge::load_pretrained(*other, {.file = dir.path / "no_model.pt"}); }),
             Catch::Contains("no section 'model'"));
}

TEST_CASE("freeze: parameters by name pattern keep their values through training",
          "[checkpoint][pretrained]") {
  torch::manual_seed(4);
  Net net;
  const auto frozen = hookforge::freeze(*net, {"backbone.0.*", "head.bias"});
  CHECK(frozen == std::vector<std::string>{"backbone.0.weight", "backbone.0.bias", "head.bias"});
  CHECK(hookforge::trainable_parameters(*net).size() == 3);
  const auto kept = net->backbone[0]->as<torch::nn::Linear>()->weight.clone();
  const auto moved = net->head->weight.clone();
  torch::optim::SGD sgd(hookforge::trainable_parameters(*net), 0.1);
  for (int i = 0; i < 3; ++i) {
    sgd.zero_grad();
    net->forward(torch::randn({8, 2})).square().mean().backward();
    sgd.step();
  }
  CHECK(torch::equal(net->backbone[0]->as<torch::nn::Linear>()->weight, kept));
  CHECK(!net->backbone[0]->as<torch::nn::Linear>()->weight.grad().defined());
  CHECK(!torch::equal(net->head->weight, moved));
  CHECK_THAT(error_of<std::invalid_argument>([&] { hookforge::freeze(*net, {"backbone.9.*"}); }),
             Catch::Contains("freeze: pattern 'backbone.9.*' matches no parameter of the model "
                             "(backbone.0.weight, backbone.0.bias, backbone.2.weight"));
}
