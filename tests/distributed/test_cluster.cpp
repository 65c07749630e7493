// What a launcher's variables say of a rank (torchrun, srun), and the agreement that stops the
// ranks at the same batch.
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "hookforge/distributed.hpp"
#include "ranks.hpp"

// After LibTorch: c10's glog defines a CHECK of its own, which Catch's must replace.
#include <catch2/catch.hpp>

namespace dist = hookforge::distributed;
using hookforge::test::message_of;
using hookforge::test::run_ranks;

namespace {

using environment = std::map<std::string, std::string>;

dist::rank_environment read(const environment& env) {
  return dist::read_rank_environment([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("expand_hostlist: Slurm's node lists, as `scontrol show hostnames` expands them") {
  // Each expected list is what Slurm 22.05's scontrol printed for the same input.
  using names = std::vector<std::string>;
  CHECK(dist::expand_hostlist("node[01-03,7],login") ==
        names{"node01", "node02", "node03", "node7", "login"});
  CHECK(dist::expand_hostlist("a[1-2]b[07,9],c") == names{"a1b07", "a1b9", "a2b07", "a2b9", "c"});
  CHECK(dist::expand_hostlist("gpu-[8-10]") == names{"gpu-8", "gpu-9", "gpu-10"});
  CHECK(dist::expand_hostlist("n[010-012]") == names{"n010", "n011", "n012"});
  CHECK(dist::expand_hostlist("vm") == names{"vm"});
  CHECK(message_of([] { dist::expand_hostlist("n[1-3"); }) ==
        "hookforge::distributed: SLURM_STEP_NODELIST 'n[1-3': a '[' without its ']'");
  CHECK(message_of([] { dist::expand_hostlist("n[3-1]"); }) ==
        "hookforge::distributed: SLURM_STEP_NODELIST 'n[3-1]': the range '3-1' is descending");
  CHECK(message_of([] { dist::expand_hostlist("n[a-b]"); }) ==
        "hookforge::distributed: SLURM_STEP_NODELIST 'n[a-b]': 'a' is not a number");
  CHECK(message_of([] {
          dist::expand_hostlist("n[1-99999999]");
        }).ends_with("the range '1-99999999' is larger than a node list holds"));
}

TEST_CASE("read_rank_environment: torchrun, srun, and srun's variables under the user's") {
  SECTION("torchrun: its attempt, and its agent serving the store") {
    const auto env = read({{"RANK", "1"},
                           {"WORLD_SIZE", "2"},
                           {"MASTER_ADDR", "127.0.0.1"},
                           {"MASTER_PORT", "29500"},
                           {"TORCHELASTIC_RUN_ID", "none"},
                           {"TORCHELASTIC_RESTART_COUNT", "1"},
                           {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
    CHECK(env.launcher == dist::launcher::torchrun);
    CHECK(env.elastic_restarts == 1);
    CHECK(env.agent_store);
    CHECK(env.restarted());
    CHECK_FALSE(env.slurm_job);
  }
  SECTION("a task of an srun step: the rank variables from Slurm's") {
    const environment slurm{{"SLURM_JOB_ID", "12345"},
                            {"SLURM_PROCID", "3"},
                            {"SLURM_STEP_NUM_TASKS", "4"},
                            {"SLURM_LOCALID", "1"},
                            {"SLURM_STEP_NODELIST", "gpu[07-08]"},
                            {"SLURM_RESTART_COUNT", "2"}};
    auto env = read(slurm);
    CHECK(env.launcher == dist::launcher::slurm);
    CHECK(env.rank == 3);
    CHECK(env.world_size == 4);
    CHECK(env.local_rank == 1);
    CHECK(env.master_addr == "gpu07");
    CHECK(env.master_port == 15000 + 12345 % 10000);
    CHECK(env.slurm_job == "12345");
    CHECK(env.slurm_restarts == 2);
    CHECK(env.restarted());

    auto mine = slurm;
    mine["MASTER_ADDR"] = "10.0.0.1";
    mine["MASTER_PORT"] = "4242";
    env = read(mine);
    CHECK(env.master_addr == "10.0.0.1");
    CHECK(env.master_port == 4242);
  }
  SECTION("an sbatch script's own shell is one process, and torchrun in a job keeps its ranks") {
    auto env = read({{"SLURM_JOB_ID", "7"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}});
    CHECK(env.launcher == dist::launcher::none);
    CHECK_FALSE(env.world_size);
    CHECK(env.slurm_job == "7");
    env = read({{"SLURM_JOB_ID", "7"},
                {"SLURM_PROCID", "0"},
                {"SLURM_STEP_NUM_TASKS", "1"},
                {"RANK", "5"},
                {"WORLD_SIZE", "8"},
                {"TORCHELASTIC_RUN_ID", "job7"}});
    CHECK(env.launcher == dist::launcher::torchrun);
    CHECK(env.rank == 5);
    CHECK(env.world_size == 8);
    CHECK(env.slurm_job == "7");
    CHECK_FALSE(env.restarted());
  }
  SECTION("a malformed variable is named") {
    CHECK(message_of([] {
            read({{"SLURM_JOB_ID", "7"}, {"SLURM_PROCID", "x"}, {"SLURM_STEP_NUM_TASKS", "2"}});
          }) ==
          "hookforge::distributed: SLURM_PROCID must be an integer in [0, 2147483647], got 'x'");
    CHECK(message_of([] {
            read({{"SLURM_JOB_ID", "7"},
                  {"SLURM_PROCID", "0"},
                  {"SLURM_STEP_NUM_TASKS", "2"},
                  {"SLURM_STEP_NODELIST", "n[1-"}});
          }).find("a '[' without its ']'") != std::string::npos);
    CHECK(message_of([] {
            read({{"RANK", "0"},
                  {"WORLD_SIZE", "2"},
                  {"TORCHELASTIC_RUN_ID", "r"},
                  {"TORCHELASTIC_RESTART_COUNT", "-1"}});
          }).find("TORCHELASTIC_RESTART_COUNT must be an integer") != std::string::npos);
  }
}

TEST_CASE(
    "options_from_env: a restarted torchrun attempt meets apart from the earlier one's keys") {
  // The keys the first attempt left in a store that outlives it (torchrun's agent store).
  auto store = c10::make_intrusive<c10d::HashStore>();
  store->add("hookforge/join/1", 1);
  store->add("hookforge/joined", 2);
  auto options = hookforge::test::rank_options(0, 2);
  options.attempt = 1;
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      auto mine = options;
      mine.rank = rank;
      failures[static_cast<std::size_t>(rank)] = message_of([&] {
        auto group = dist::init_with_store(store, mine, "an agent's store");
        group.barrier();
      });
    });
  for (auto& t : threads) t.join();
  CHECK(failures == std::vector<std::string>{"(no exception)", "(no exception)"});
}

TEST_CASE("agreement: a stop asked on one rank stops every rank one batch later, the same batch") {
  std::vector<std::vector<int>> stops(3);
  run_ranks(3, [&](int rank, dist::process_group& group) {
    auto agreement = dist::agreement(group);
    CHECK(agreement.rank == rank);
    CHECK(agreement.world_size == 3);
    for (int batch = 0; batch < 8; ++batch)
      if (agreement.stop(rank == 2 && batch == 3)) {
        stops[static_cast<std::size_t>(rank)].push_back(batch);
        break;
      }
  });
  CHECK(stops == std::vector<std::vector<int>>{{4}, {4}, {4}});
  CHECK_FALSE(dist::agreement(dist::process_group{}).stop);  // one process decides alone
}

TEST_CASE("agreement: gather gives every rank each rank's state, by rank, each time") {
  std::vector<std::vector<hookforge::state_map>> got(2);
  run_ranks(2, [&](int rank, dist::process_group& group) {
    auto agreement = dist::agreement(group);
    for (int round = 0; round < 2; ++round) {
      hookforge::state_map mine{{"batches", std::int64_t{10 * round + rank}},
                                {"scores.sum", torch::full({2}, rank + 0.5, torch::kDouble)}};
      for (auto& state : agreement.gather(mine))
        got[static_cast<std::size_t>(rank)].push_back(state);
    }
  });
  for (const auto& states : got) {
    REQUIRE(states.size() == 4);
    for (int i = 0; i < 4; ++i) {
      const int rank = i % 2, round = i / 2;
      const auto& state = states[static_cast<std::size_t>(i)];
      CHECK(state.at("batches").toInt() == 10 * round + rank);
      CHECK(torch::equal(state.at("scores.sum").toTensor(),
                         torch::full({2}, rank + 0.5, torch::kDouble)));
    }
  }
}
