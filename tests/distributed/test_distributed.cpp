// hookforge::distributed on CPU over loopback: ranks are threads of this process, meeting through a
// shared c10d::HashStore or a TCPStore on 127.0.0.1, with Gloo between them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <latch>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include "hookforge/distributed.hpp"
#include "ranks.hpp"
#include "hookforge/hooks.hpp"
#include "hookforge/torch.hpp"

// After LibTorch: c10's glog defines a CHECK of its own, which Catch's must replace.
#include <catch2/catch.hpp>

namespace dist = hookforge::distributed;
namespace pts = hookforge::points;
using hookforge::Entry;

namespace {

using namespace std::chrono_literals;
using hookforge::test::message_of;
using hookforge::test::rank_options;
using hookforge::test::run_ranks;

/// A port on 127.0.0.1 that this process keeps bound, without listening, while the object
/// lives: a connection to it is refused, and no other process can bind it meanwhile (nor
/// does the kernel hand it out for port 0). Nothing serves there, for sure.
class unserved_port {
 public:
  unserved_port() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  unserved_port(const unserved_port&) = delete;
  unserved_port& operator=(const unserved_port&) = delete;
  ~unserved_port() { ::close(fd_); }
  int port() const noexcept { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

/// A port on 127.0.0.1 that was free a moment ago (and may be taken by now: see serve_rendezvous).
int port_free_a_moment_ago() { return unserved_port().port(); }

/// Rank 0's side of a TCPStore rendezvous on 127.0.0.1, at a port the kernel picks as it binds
/// (port 0; getPort() reads it back): no other process can take the port between its choice
/// and the bind, as with a number picked beforehand (`ctest -j`). The other ranks reach it
/// through dist::init with master_port = getPort().
c10::intrusive_ptr<c10d::TCPStore> serve_rendezvous(int world) {
  c10d::TCPStoreOptions options;
  options.port = 0;
  options.isServer = true;
  options.numWorkers = static_cast<std::size_t>(world);
  options.waitWorkers = false;
  options.timeout = 20s;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
  REQUIRE(store->getPort() != 0);
  return store;
}

}  // namespace

// --- the sharded sampler ---------------------------------------------------------------------

TEST_CASE(
    "sharded_sampler: every rank an equal shard, and the shards cover the epoch, disjoint but for "
    "padding") {
  const std::size_t n = 10;
  const hookforge::random_sampler inner(n, 7);
  for (std::int64_t epoch : {0, 1}) {
    const auto order = inner.indices(epoch);
    std::multiset<std::size_t> seen;
    for (int rank = 0; rank < 4; ++rank) {
      hookforge::sharded_sampler shard(inner, rank, 4);
      REQUIRE(shard.size() == 3);  // ceil(10 / 4)
      const auto mine = shard.indices(epoch);
      REQUIRE(mine.size() == 3);
      for (std::size_t j = 0; j < mine.size(); ++j) {
        const std::size_t position = rank + 4 * j;  // every 4th index of the padded order
        CHECK(mine[j] == order[position % n]);
      }
      seen.insert(mine.begin(), mine.end());
      CHECK(shard.indices(epoch) == mine);  // a pure function of the epoch
    }
    // 12 slots for 10 samples: every sample once, and the epoch's first two twice (the padding).
    for (std::size_t i = 0; i < n; ++i)
      CHECK(seen.count(i) == (i == order[0] || i == order[1] ? 2u : 1u));
  }
  // Each epoch its own order, from the shared seed.
  CHECK(hookforge::sharded_sampler(inner, 0, 2).indices(0) !=
        hookforge::sharded_sampler(inner, 0, 2).indices(1));
}

TEST_CASE("sharded_sampler: exact split, drop_last, seed, errors, and a DataLoader over a shard") {
  std::set<std::size_t> all;
  for (int rank = 0; rank < 3; ++rank) {
    const auto mine =
        hookforge::sharded_sampler(hookforge::sequential_sampler(12), rank, 3).indices(0);
    REQUIRE(mine.size() == 4);
    for (auto i : mine) CHECK(all.insert(i).second);  // disjoint
  }
  CHECK(all.size() == 12);  // and covering

  std::set<std::size_t> kept;
  for (int rank = 0; rank < 4; ++rank) {
    hookforge::sharded_sampler shard(hookforge::random_sampler(10, 3), rank, 4,
                                     {.drop_last = true});
    REQUIRE(shard.size() == 2);
    for (auto i : shard.indices(5)) CHECK(kept.insert(i).second);
  }
  CHECK(kept.size() == 8);

  hookforge::sharded_sampler seeded(hookforge::random_sampler(10, 3), 1, 2);
  STATIC_REQUIRE(hookforge::seeded_sampler<decltype(seeded)>);
  STATIC_REQUIRE(
      !hookforge::seeded_sampler<hookforge::sharded_sampler<hookforge::sequential_sampler>>);
  CHECK(seeded.seed() == 3);
  seeded.set_seed(9);
  CHECK(seeded.indices(0) ==
        hookforge::sharded_sampler(hookforge::random_sampler(10, 9), 1, 2).indices(0));

  CHECK(message_of([] { hookforge::sharded_sampler(hookforge::sequential_sampler(4), 2, 2); }) ==
        "sharded_sampler: rank must be in [0, 2), got 2");
  CHECK(message_of([] { hookforge::sharded_sampler(hookforge::sequential_sampler(4), 0, 0); }) ==
        "sharded_sampler: world_size must be >= 1, got 0");

  hookforge::tensor_dataset data{{"x", torch::arange(10, torch::kFloat)}};
  hookforge::DataLoader loader(
      data, hookforge::sharded_sampler(hookforge::sequential_sampler(10), 1, 2), {.batch_size = 2});
  std::vector<float> got;
  for (const auto& batch : loader)
    for (int i = 0; i < batch.at("x").size(0); ++i) got.push_back(batch.at("x")[i].item<float>());
  CHECK(got == std::vector<float>{1, 3, 5, 7, 9});
}

// --- joining a run ------------------------------------------------------------------------------

TEST_CASE("init: a world of one needs no environment and its collectives do nothing") {
  const auto options =
      dist::options_from_env({}, [](const char*) -> const char* { return nullptr; });
  CHECK(options.world_size == 1);
  CHECK(options.rank == 0);
  auto group = dist::init(options);
  CHECK(group.rank() == 0);
  CHECK(group.world_size() == 1);
  CHECK(group.is_rank_zero());
  CHECK_FALSE(group.distributed());
  CHECK(group.backend_name() == "none");
  auto t = torch::tensor({1.0, 2.0});
  group.allreduce(t);
  group.broadcast(t, 0);
  group.barrier();
  CHECK(torch::equal(t, torch::tensor({1.0, 2.0})));
  CHECK(group.allgather(t).size() == 1);
}

TEST_CASE("options_from_env: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, checked") {
  auto from = [](std::map<std::string, std::string> env) {
    return dist::options_from_env({}, [env = std::move(env)](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  };
  const auto o = from(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "1234"}});
  CHECK(o.rank == 1);
  CHECK(o.world_size == 2);
  CHECK(o.master_addr == "10.1.2.3");
  CHECK(o.master_port == 1234);
  CHECK(message_of([&] { from({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}); }) ==
        "hookforge::distributed: WORLD_SIZE is 2 but RANK is not set: give each process its RANK "
        "in [0, 2)");
  CHECK(message_of([&] { from({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "h"}}); }) ==
        "hookforge::distributed: RANK must be in [0, WORLD_SIZE = 2), got 2");
  CHECK(message_of([&] {
          from({{"WORLD_SIZE", "2"}, {"RANK", "0"}});
        }).find("MASTER_ADDR is not set") != std::string::npos);
  CHECK(message_of([&] { from({{"MASTER_PORT", "http"}}); }) ==
        "hookforge::distributed: MASTER_PORT must be an integer in [1, 65535], got 'http'");
}

TEST_CASE("init: a rank that never joins is named, within the join timeout") {
  using clock = std::chrono::steady_clock;
  auto options = rank_options(0, 3);
  options.join_timeout = 300ms;

  SECTION("through a store") {
    const auto started = clock::now();
    const auto message = message_of([&] {
      dist::init_with_store(c10::make_intrusive<c10d::HashStore>(), options, "a HashStore");
    });
    CHECK(clock::now() - started < 5s);
    CHECK(message.find("hookforge::distributed: rank 0 waited 0.3 s for ranks 1, 2 of 3 at a "
                       "HashStore, which did not join "
                       "(joined: rank 0)") == 0);
  }
  SECTION("through a TCPStore: rank 0 serves, nobody comes") {
    // dist::init serves at the port it is given, which must be chosen beforehand: another
    // process may bind it first (EADDRINUSE), and then this takes another. Nobody here
    // connects to it, so no other process's rank can be mistaken for ours.
    options.world_size = 2;
    std::string message;
    for (int attempt = 0; attempt < 20; ++attempt) {
      options.master_port = port_free_a_moment_ago();
      const auto started = clock::now();
      message = message_of([&] { dist::init(options); });
      if (message.find("hookforge::distributed: rank 0 could not serve the rendezvous") == 0)
        continue;  // taken
      CHECK(clock::now() - started < 5s);
      break;
    }
    CAPTURE(message);
    CHECK(message.find(fmt::format("for rank 1 of 2 at 127.0.0.1:{}, which did not join",
                                   options.master_port)) != std::string::npos);
  }
  SECTION("through a TCPStore: no rank 0 to reach") {
    const unserved_port nobody;  // bound by this process, not listening: refused, and nobody else's
    options.rank = 1;
    options.world_size = 2;
    options.master_port = nobody.port();
    const auto started = clock::now();
    const auto message = message_of([&] { dist::init(options); });
    CHECK(clock::now() - started < 10s);
    CAPTURE(message);
    CHECK(message.find(
              fmt::format("hookforge::distributed: rank 1 could not reach rank 0 at 127.0.0.1:{}",
                          options.master_port)) == 0);
  }
  SECTION("two processes claiming one rank") {
    // The first claimant is the thread that announced itself (hookforge/join/0 in the
    // store, init.hpp), the second comes only after that: no timing decides who is who.
    auto store = c10::make_intrusive<c10d::HashStore>();
    options.world_size = 2;
    std::string first, second;
    std::thread a(
        [&] { first = message_of([&] { dist::init_with_store(store, options, "a HashStore"); }); });
    const auto deadline = clock::now() + 20s;
    bool announced = false;
    while (!(announced = store->check({"hookforge/join/0"})) && clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    if (announced)
      second = message_of([&] { dist::init_with_store(store, options, "a HashStore"); });
    a.join();
    REQUIRE(announced);
    CHECK(second.find("hookforge::distributed: rank 0 joined a HashStore twice") == 0);
    CHECK(first.find("for rank 1 of 2 at a HashStore, which did not join") != std::string::npos);
  }
}

TEST_CASE("two ranks over a TCPStore on loopback: the collectives") {
  // Rank 0 serves the rendezvous at a port the kernel picked (serve_rendezvous); rank 1 joins
  // through dist::init, as a rank started with MASTER_PORT would.
  const auto server = serve_rendezvous(2);
  const int port = server->getPort();
  std::vector<std::exception_ptr> failures(2);
  std::vector<std::vector<double>> results(2);
  std::vector<std::string> backends(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      try {
        auto options = rank_options(rank, 2);
        options.master_port = port;
        auto group = rank == 0
                         ? dist::init_with_store(server, options, fmt::format("127.0.0.1:{}", port))
                         : dist::init(options);
        backends[rank] = group.backend_name();
        auto sum = torch::tensor({1.0 + rank, 10.0});
        group.allreduce(sum);
        auto max = torch::tensor({static_cast<std::int64_t>(rank)}, torch::kLong);
        group.allreduce(max, dist::reduce_op::max);
        auto min = torch::tensor({static_cast<float>(rank) - 1.0f});
        group.allreduce(min, dist::reduce_op::min);
        auto root = torch::full({3}, static_cast<float>(rank + 5));
        group.broadcast(root, 1);
        const auto gathered = group.allgather(torch::tensor({static_cast<float>(rank * 3)}));
        group.barrier();
        results[rank] = {sum[0].item<double>(),
                         sum[1].item<double>(),
                         static_cast<double>(max.item<std::int64_t>()),
                         min.item<double>(),
                         root[2].item<double>(),
                         gathered[0].item<double>(),
                         gathered[1].item<double>()};
      } catch (...) {
        failures[rank] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
  CHECK(backends == std::vector<std::string>{"gloo", "gloo"});
  const std::vector<double> expected{3, 20, 1, -1, 6, 0, 3};
  CHECK(results[0] == expected);
  CHECK(results[1] == expected);
}

TEST_CASE(
    "two ranks through a FileStore: join, a collective, and the file's rank named when one is "
    "missing") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("hookforge_distributed_filestore_" + std::to_string(::getpid()));
  std::filesystem::remove(path);
  std::vector<std::exception_ptr> failures(2);
  std::vector<double> sums(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      try {
        auto group = dist::init_with_file(path, rank_options(rank, 2));
        auto t = torch::tensor({static_cast<double>(rank + 1)});
        group.allreduce(t);
        sums[rank] = t.item<double>();
      } catch (...) {
        failures[rank] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
  CHECK(sums == std::vector<double>{3.0, 3.0});

  std::filesystem::remove(path);
  auto options = rank_options(1, 2);
  options.join_timeout = 300ms;
  const auto message = message_of([&] { dist::init_with_file(path, options); });
  CHECK(message.find("hookforge::distributed: rank 1 waited 0.3 s for rank 0 of 2 at file " +
                     path.string() + ", which did not join (joined: rank 1)") == 0);
  std::filesystem::remove(path);
}

// --- data-parallel training -------------------------------------------------------------------

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc1(register_module("fc1", torch::nn::Linear(2, 8))),
        fc2(register_module("fc2", torch::nn::Linear(8, 1))) {}
  torch::Tensor forward(const Entry& e) { return fc2(torch::tanh(fc1(e.at("input")))); }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

Net make_net(int seed) {
  torch::manual_seed(seed);
  return Net();
}

torch::Tensor flat_parameters(const torch::nn::Module& m) {
  std::vector<torch::Tensor> parts;
  for (auto& p : m.parameters()) parts.push_back(p.detach().reshape({-1}).clone());
  return torch::cat(parts);
}

/// The model's parameters after every update.
struct ParameterTrace {
  std::vector<torch::Tensor>* out;
  static constexpr int priority = hookforge::priority::LOWEST;
  void record(hookforge::TrainingContext& ctx) {
    if (ctx.optimizer_stepped) out->push_back(flat_parameters(*ctx.model));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(record, pts::on_post_step));
};

hookforge::tensor_dataset regression(int n, int seed) {
  torch::manual_seed(seed);
  auto x = torch::randn({n, 2});
  auto y = (x.select(1, 0) * 1.5 - x.select(1, 1) * 0.5 + 0.25).unsqueeze(1);
  return {{"input", x}, {"target", y}};
}

torch::Tensor mse(const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); }

struct run_record {
  std::vector<torch::Tensor> trace;
  hookforge::fit_result result;
  torch::Tensor final_parameters;
  std::int64_t averaged_updates = 0;
};

/// Train `net` for 3 epochs: `world` ranks (this one `rank`) with `batch` samples per rank per
/// batch. The data are made beforehand, on one thread: torch::manual_seed and randn use the global
/// generator.
run_record train(Net net, const dist::process_group& group, std::int64_t batch,
                 std::int64_t accumulation, const std::filesystem::path& work_dir,
                 const hookforge::tensor_dataset& train_data,
                 const hookforge::tensor_dataset& val_data) {
  run_record record;
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  dist::data_parallel dp(group);
  hookforge::default_hooks defaults(
      {.logger = {.stream = nullptr}, .checkpoint = {.save_best = "loss"}});
  hookforge::TrainingEpochRunner runner(sgd, {.gradient_accumulation_steps = accumulation},
                                        dp.training(), ParameterTrace{&record.trace});
  hookforge::ValidationEpochRunner validate({}, dp.validation());
  hookforge::Trainer trainer(net, runner, validate, {.epochs = 3, .work_dir = work_dir},
                             dp.trainer(), dist::rank_zero_only(defaults.trainer(), group));
  const auto shard = [&](auto sampler) {
    return hookforge::sharded_sampler(sampler, group.rank(), group.world_size());
  };
  hookforge::DataLoader train_loader(train_data, shard(hookforge::random_sampler(128, 7)),
                                     {.batch_size = batch});
  hookforge::DataLoader val_loader(val_data, shard(hookforge::sequential_sampler(48)),
                                   {.batch_size = 16});
  record.result = trainer.fit(train_loader, val_loader, mse);
  record.final_parameters = flat_parameters(*net);
  record.averaged_updates = dp.gradients.updates();
  return record;
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("hookforge_distributed_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE(
    "GradientAllReduce: 2 ranks x batch 16 train as 1 rank x batch 32, and the ranks agree after "
    "every step") {
  const auto [batch, accumulation] = GENERATE(std::pair<std::int64_t, std::int64_t>{16, 1},
                                              std::pair<std::int64_t, std::int64_t>{8, 2});
  CAPTURE(batch, accumulation);
  const auto root = fresh_dir("train");
  // Models are built here, on one thread (torch::manual_seed is global): rank 1 starts from
  // other weights, which the start-up broadcast replaces by rank 0's.
  const Net reference_net = make_net(100);
  const std::vector<Net> nets{make_net(100), make_net(101)};
  REQUIRE_FALSE(torch::equal(flat_parameters(*nets[0]), flat_parameters(*nets[1])));

  const auto train_data = regression(128, 1);
  const auto val_data = regression(48, 2);

  const run_record alone =
      train(reference_net, dist::process_group(), 32, 1, root / "alone", train_data, val_data);
  std::vector<run_record> ranks(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    ranks[rank] = train(nets[rank], group, batch, accumulation,
                        root / ("rank" + std::to_string(rank)), train_data, val_data);
  });

  REQUIRE(alone.trace.size() == 12);  // 3 epochs of 128 / 32 updates
  REQUIRE(ranks[0].trace.size() == 12);
  REQUIRE(ranks[1].trace.size() == 12);
  for (std::size_t step = 0; step < 12; ++step) {
    CAPTURE(step);
    CHECK(torch::equal(ranks[0].trace[step], ranks[1].trace[step]));  // the same bits on every rank
    CHECK(torch::allclose(ranks[0].trace[step], alone.trace[step], 1e-5, 1e-6));
  }
  CHECK(torch::equal(ranks[1].final_parameters, ranks[0].final_parameters));
  CHECK(torch::allclose(ranks[1].final_parameters, alone.final_parameters, 1e-5, 1e-6));
  CHECK(alone.averaged_updates == 0);  // a world of one: the hooks return at once
  CHECK(ranks[0].averaged_updates == 12);

  // Scores are global: the same bits on both ranks, and the means over all 128 (48) samples.
  const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  REQUIRE(ranks[0].result.history.size() == 3);
  REQUIRE(ranks[1].result.history.size() == 3);
  for (std::size_t e = 0; e < 3; ++e) {
    CAPTURE(e);
    const auto& zero = ranks[0].result.history[e];
    const auto& one = ranks[1].result.history[e];
    CHECK(bits(zero.train_scores.at("loss")) == bits(one.train_scores.at("loss")));
    CHECK(bits(zero.val_scores.at("loss")) == bits(one.val_scores.at("loss")));
    CHECK(zero.train_scores.at("loss") ==
          Approx(alone.result.history[e].train_scores.at("loss")).epsilon(1e-5));
    CHECK(zero.val_scores.at("loss") ==
          Approx(alone.result.history[e].val_scores.at("loss")).epsilon(1e-5));
  }

  // Files from rank 0 only; its metrics.csv holds the global scores.
  CHECK(std::filesystem::exists(root / "rank0" / "metrics.csv"));
  CHECK(std::filesystem::exists(root / "rank0" / "epoch_3.pt"));
  CHECK_FALSE(std::filesystem::exists(root / "rank1"));
  std::filesystem::remove_all(root);
}

TEST_CASE("ScoreAllReduce: means over every rank's samples, and a stop on one rank stops all") {
  struct fake_context {
    hookforge::score_accumulator running_scores;
    hookforge::epoch_scores scores;
    bool stop_training = false;
  };
  std::vector<fake_context> contexts(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    auto& ctx = contexts[rank];
    // Rank 0: 3 samples of loss 1; rank 1: 1 sample of loss 5. Globally: (3 + 5) / 4 = 2.
    ctx.running_scores.add({{"loss", torch::tensor(rank == 0 ? 1.0 : 5.0)},
                            {"psnr", torch::tensor(10.0 * (rank + 1))}},
                           rank == 0 ? 3 : 1);
    ctx.scores = ctx.running_scores.means();
    ctx.stop_training = rank == 1;
    dist::ScoreAllReduce(group).reduce(ctx);
  });
  for (const auto& ctx : contexts) {
    CHECK(ctx.scores.at("loss") == 2.0);
    CHECK(ctx.scores.at("psnr") == 12.5);  // (3 * 10 + 1 * 20) / 4
    CHECK(ctx.stop_training);
  }

  // Different score names: every rank says so.
  std::vector<std::string> messages(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    fake_context ctx;
    ctx.running_scores.add({{rank == 0 ? "loss" : "mse", torch::tensor(1.0)}}, 1);
    messages[rank] = message_of([&] { dist::ScoreAllReduce(group).reduce(ctx); });
  });
  CHECK(messages[0] ==
        "ScoreAllReduce: the ranks recorded different scores this epoch (rank 0 has: loss); every "
        "rank "
        "must use the same criterion and metrics");
  CHECK(messages[1].find("(rank 1 has: mse)") != std::string::npos);
}

TEST_CASE("StopAgreement: a trainer stop on one rank is a stop on all") {
  std::vector<hookforge::TrainerContext> contexts(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    if (rank == 1) contexts[rank].request_stop("EarlyStopping: patience");
    dist::StopAgreement(group).agree(contexts[rank]);
  });
  CHECK(contexts[0].stop_training);
  CHECK(contexts[0].stop_reason == "requested on rank 1");
  CHECK(contexts[1].stop_reason == "EarlyStopping: patience");
}

TEST_CASE(
    "GradientAllReduce: one rank's veto holds on all, and a gradient only one rank has is "
    "averaged") {
  std::array<bool, 2>
      vetoed{};  // not vector<bool>: its bits share a word, and the ranks are threads
  std::vector<torch::Tensor> grads(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    auto used = torch::ones({3}, torch::requires_grad());
    auto sometimes = torch::zeros({2}, torch::requires_grad());
    torch::optim::SGD sgd({used, sometimes}, 0.1);
    hookforge::TrainingContext ctx;
    ctx.optimizer = &sgd;
    ctx.optimizer_step_due = true;
    used.mutable_grad() = torch::full({3}, static_cast<float>(rank * 2));  // 0 and 2: average 1
    if (rank == 1) sometimes.mutable_grad() = torch::full({2}, 4.0f);  // rank 0 has none: average 2
    ctx.skip_optimizer_step = rank == 1;                       // say, CheckInvalidLoss on rank 1
    dist::GradientAllReduce hook(group, {.bucket_mb = 1e-5});  // 10 bytes: one bucket per tensor
    hook.average_gradients(ctx);
    vetoed[rank] = ctx.skip_optimizer_step;
    grads[rank] = torch::cat({used.grad(), sometimes.grad()});
  });
  CHECK(vetoed[0]);
  CHECK(vetoed[1]);
  CHECK(torch::equal(grads[0], torch::tensor({1.0f, 1.0f, 1.0f, 2.0f, 2.0f})));
  CHECK(torch::equal(grads[1], grads[0]));
}

TEST_CASE(
    "GradientAllReduce: buffers averaged or broadcast at the epoch's end, and different models are "
    "an error") {
  struct model_context {
    torch::nn::Module* model = nullptr;
  };
  struct Stats : torch::nn::Module {
    explicit Stats(float value) {
      mean = register_buffer("mean", torch::full({2}, value));
      count = register_buffer("count",
                              torch::full({1}, static_cast<std::int64_t>(value), torch::kLong));
    }
    torch::Tensor mean, count;
  };
  for (auto mode : {dist::buffer_sync::average, dist::buffer_sync::broadcast}) {
    std::vector<std::pair<float, std::int64_t>> after(2);
    run_ranks(2, [&](int rank, dist::process_group& group) {
      Stats stats(rank == 0 ? 1.0f : 3.0f);
      model_context ctx{&stats};
      dist::GradientAllReduce(group, {.buffers = mode}).sync_buffers(ctx);
      after[rank] = {stats.mean[1].item<float>(), stats.count.item<std::int64_t>()};
    });
    const float mean = mode == dist::buffer_sync::average ? 2.0f : 1.0f;
    for (const auto& a : after) {
      CHECK(a.first == mean);
      CHECK(a.second == 1);  // integer buffers come from rank 0 either way
    }
  }

  std::vector<std::string> messages(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    torch::nn::Linear layer(2, rank == 0 ? 3 : 4);
    model_context ctx{layer.get()};
    messages[rank] = message_of([&] { dist::GradientAllReduce(group).broadcast_parameters(ctx); });
  });
  CHECK(
      messages[0] ==
      "GradientAllReduce: the ranks' models differ: rank 0 has 2 tensors of 9 elements, but across "
      "the ranks there are 2 to 2 tensors and 9 to 12 elements; every rank must build the same "
      "model");
  CHECK(messages[1].find("rank 1 has 2 tensors of 12 elements") != std::string::npos);
}

TEST_CASE(
    "plan_buckets: by dtype and device, in order, at most bucket_bytes, and flatten and back") {
  std::vector<torch::Tensor> ts{torch::ones({4}), torch::ones({2}, torch::kDouble),
                                torch::ones({3}), torch::Tensor(), torch::ones({10})};
  const auto plan = dist::plan_buckets(ts, 7 * 4);  // 7 floats
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].members == std::vector<std::size_t>{0, 2});  // 4 + 3 floats
  CHECK(plan[1].members == std::vector<std::size_t>{4});     // 10 floats: a bucket of its own
  CHECK(plan[2].members == std::vector<std::size_t>{1});     // the doubles
  CHECK(plan[2].dtype == torch::kDouble);
  auto flat = dist::flatten(ts, plan[0], torch::tensor({9.0}));
  CHECK(flat.numel() == 8);
  flat.mul_(2);
  dist::unflatten_into(flat, ts, plan[0]);
  CHECK(torch::equal(ts[0], torch::full({4}, 2.0f)));
  CHECK(torch::equal(ts[2], torch::full({3}, 2.0f)));
}

namespace {
struct Counter {
  int* calls;
  void count(hookforge::TrainerContext&) { ++*calls; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_trainer_epoch_finished));
};
struct EpochEnds {
  using hook_points = hookforge::point_list<pts::on_trainer_epoch_finished>;
  using Ctx = hookforge::TrainerContext;
  static constexpr std::string_view runner_name = "EpochEnds";
};
}  // namespace

TEST_CASE("enabled_if / rank_zero_only: the handlers run where the flag holds, and bindings stay") {
  int on = 0, off = 0;
  hookforge::TrainerContext ctx;
  hookforge::hook_pack<EpochEnds, hookforge::gated_hook<Counter>, hookforge::gated_hook<Counter>>
      pack(hookforge::enabled_if(Counter{&on}, true), hookforge::enabled_if(Counter{&off}, false));
  pack.fire<pts::on_trainer_epoch_finished>(ctx);
  CHECK(on == 1);
  CHECK(off == 0);
  STATIC_REQUIRE(hookforge::list_bindings<hookforge::gated_hook<Counter>>() ==
                 hookforge::list_bindings<Counter>());

  const dist::process_group alone;  // rank 0 of 1
  auto set = dist::rank_zero_only(hookforge::hook_set(Counter{&on}, Counter{&off}), alone);
  CHECK(std::get<0>(set.hooks).enabled());
  CHECK(std::get<1>(set.hooks).enabled());
  auto single = dist::rank_zero_only(Counter{&on}, alone);
  single.set_enabled(false);
  CHECK_FALSE(single.enabled());
}
