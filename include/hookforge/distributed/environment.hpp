// hookforge/distributed/environment.hpp — what the environment says of this process's rank: the
// variables torchrun and hookforge-run --nproc set, each read and checked in one place.
//
//   auto env = hookforge::distributed::read_rank_environment();  // RANK, WORLD_SIZE, LOCAL_RANK,
//                                                          // MASTER_ADDR, MASTER_PORT
//   int world = env.world_size.value_or(1);
//   hookforge::distributed::check_rank(env.rank.value_or(0), world);
//
// A malformed variable is std::invalid_argument naming it ("hookforge::distributed: MASTER_PORT
// must be an integer in [1, 65535], got 'http'"). Needs no c10d: hookforge-run reads it
// whether or not it was built with hookforge::distributed.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

namespace hookforge::distributed {

/// How a variable is looked up: std::getenv, unless a test gives another.
using getenv_function = std::function<const char*(const char*)>;

inline const char* process_getenv(const char* name) { return std::getenv(name); }

/// An environment variable as an integer in [low, high]; nullopt when unset or empty.
inline std::optional<long long> env_int(const char* name, long long low, long long high,
                                        const getenv_function& getenv = process_getenv) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high)
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: {} must be an integer in [{}, {}], got '{}'", name,
                    low, high, text));
  return value;
}

/// The rank variables as set (each nullopt when unset or empty), each range-checked alone.
struct rank_environment {
  std::optional<int> world_size;  ///< WORLD_SIZE, >= 1
  std::optional<int> rank;        ///< RANK, >= 0
  std::optional<int> local_rank;  ///< LOCAL_RANK, >= 0: the GPU of this process on its machine
  std::optional<std::string> master_addr;  ///< MASTER_ADDR
  std::optional<int> master_port;          ///< MASTER_PORT, in [1, 65535]
};

inline rank_environment read_rank_environment(const getenv_function& getenv = process_getenv) {
  constexpr long long max_int = std::numeric_limits<int>::max();
  auto as_int = [](std::optional<long long> v) {
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  rank_environment env;
  env.world_size = as_int(env_int("WORLD_SIZE", 1, max_int, getenv));
  env.rank = as_int(env_int("RANK", 0, max_int, getenv));
  if (const char* addr = getenv("MASTER_ADDR"); addr && *addr) env.master_addr = addr;
  env.master_port = as_int(env_int("MASTER_PORT", 1, 65535, getenv));
  env.local_rank = as_int(env_int("LOCAL_RANK", 0, max_int, getenv));
  return env;
}

/// Throws std::invalid_argument unless `rank` is in [0, world_size).
inline void check_rank(int rank, int world_size) {
  if (rank < 0 || rank >= world_size)
    throw std::invalid_argument(fmt::format(
        "hookforge::distributed: RANK must be in [0, WORLD_SIZE = {}), got {}", world_size, rank));
}

}  // namespace hookforge::distributed
