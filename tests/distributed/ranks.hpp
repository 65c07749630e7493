// tests/distributed/ranks.hpp — ranks as threads, for the distributed tests: each joins one
// HashStore and runs a body with its process group.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "hookforge/distributed/init.hpp"

namespace hookforge::test {

namespace dist = hookforge::distributed;
using namespace std::chrono_literals;

inline dist::init_options rank_options(int rank, int world) {
  dist::init_options o;
  o.rank = rank;
  o.world_size = world;
  o.join_timeout = 20s;
  o.timeout = 30s;  // a test that goes wrong fails instead of hanging
  return o;
}

/// Run `body(rank, group)` on `world` threads joined through one HashStore; rethrow the first
/// failure. Every rank's group lives until every body has returned: a rank that finished (or
/// threw) first must not tear down its Gloo context while a peer is still in a collective
/// with it.
inline void run_ranks(int world, const std::function<void(int, dist::process_group&)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(world));
  std::latch bodies_done(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      std::optional<dist::process_group> group;
      try {
        group.emplace(dist::init_with_store(store, rank_options(rank, world), "a HashStore"));
        body(rank, *group);
      } catch (...) {
        failures[static_cast<std::size_t>(rank)] = std::current_exception();
      }
      bodies_done.arrive_and_wait();
    });
  for (auto& t : threads) t.join();
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
}

inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace hookforge::test
