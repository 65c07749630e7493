// hookforge/distributed/init.hpp — joining a distributed run: the ranks meet through a c10d store,
// check that all of them are there, and build the backend (Gloo; NCCL on CUDA builds).
//
//   auto pg = hookforge::distributed::init_from_env();   // RANK, WORLD_SIZE, MASTER_ADDR,
//   MASTER_PORT
//
// init_from_env reads the variables torchrun sets (or srun's, slurm.hpp). Without WORLD_SIZE (or
// with WORLD_SIZE=1) it returns a single-process group and needs nothing else: the same program
// runs alone or as one rank of many.
//
// Rendezvous. init() uses a c10d::TCPStore served by rank 0 at MASTER_ADDR:MASTER_PORT (by
// torchrun's agent under torchrun, each attempt's ranks under keys of their own);
// init_with_file() a c10d::FileStore (a file every rank can reach, for tests and shared
// file systems); init_with_store() any store (a c10d::HashStore shared by threads, in
// tests). Each rank then announces itself under "hookforge/join/<rank>" and waits until
// all world_size ranks have: when one does not come within `join_timeout`, every rank
// that waited throws hookforge::distributed::error naming the ranks that are missing and where
// they were expected. A second process claiming a rank already taken is told so at once.
// Only then is the backend built (its own rendezvous goes through the same store, under
// the prefix "hookforge/backend/"), with `timeout` for every collective afterwards.
//
// Gloo's network device: GLOO_SOCKET_IFNAME when set (as in PyTorch), else the loopback
// address when MASTER_ADDR is a loopback address (one machine), else the address this
// machine's hostname resolves to (c10d's default device).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <c10/util/intrusive_ptr.h>
#include <torch/cuda.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "hookforge/distributed/environment.hpp"
#include "hookforge/distributed/process_group.hpp"

namespace hookforge::distributed {

/// How a rank joins a run. init_from_env fills rank, world_size, master_addr and master_port.
struct init_options {
  int rank = 0;                           ///< this process, in [0, world_size)
  int world_size = 1;                     ///< processes in the run
  std::string master_addr = "127.0.0.1";  ///< where rank 0 serves the TCPStore (init())
  int master_port = 29500;                ///< its port (init())
  std::string backend = "gloo";           ///< "gloo" (CPU), or "nccl" (CUDA builds of LibTorch)
  /// NCCL: this rank's GPU (LOCAL_RANK, as torchrun sets it); -1: rank modulo the GPUs.
  int local_rank = -1;
  /// How long a rank waits for the others to join (and to reach rank 0's store).
  std::chrono::milliseconds join_timeout = std::chrono::minutes(5);
  /// How long a collective waits for the other ranks (PyTorch's default: 30 min).
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  /// The launcher's attempt (torchrun's TORCHELASTIC_RESTART_COUNT): a restarted attempt's
  /// ranks meet under keys of their own, apart from those the earlier attempts left in a
  /// store that outlives them (torchrun's agent store).
  int attempt = 0;
  /// init(): the launcher serves the store at master_addr:master_port (torchrun's
  /// TORCHELASTIC_USE_AGENT_STORE), and rank 0 is a client like the others.
  bool launcher_serves_store = false;
};

namespace detail {

inline bool is_loopback(std::string_view address) {
  return address == "localhost" || address.starts_with("127.") || address == "::1";
}

inline std::string join_key(int rank) { return "hookforge/join/" + std::to_string(rank); }
inline std::string address_key(int rank) { return "hookforge/address/" + std::to_string(rank); }

/// This machine's address as rank 0's sees it: the local end of a route to
/// master_addr:master_port (a UDP socket connected there; nothing is sent), else the host
/// name. Messages name a peer by it.
inline std::string local_address(const init_options& o) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const auto port = std::to_string(o.master_port);
  std::string address;
  if (::getaddrinfo(o.master_addr.c_str(), port.c_str(), &hints, &found) == 0 && found) {
    const int fd = ::socket(found->ai_family, SOCK_DGRAM, 0);
    sockaddr_storage local{};
    socklen_t size = sizeof local;
    char text[INET6_ADDRSTRLEN] = {};
    if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) == 0 &&
        ::getnameinfo(reinterpret_cast<sockaddr*>(&local), size, text, sizeof text, nullptr, 0,
                      NI_NUMERICHOST) == 0)
      address = text;
    if (fd >= 0) ::close(fd);
    ::freeaddrinfo(found);
  }
  if (address.empty()) {
    char host[256] = {};
    address = ::gethostname(host, sizeof host - 1) == 0 ? host : "an unknown address";
  }
  return address;
}

inline void check_options(const init_options& o) {
  if (o.world_size < 1)
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: world_size must be >= 1, got {}", o.world_size));
  if (o.rank < 0 || o.rank >= o.world_size)
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: rank must be in [0, {}) (world_size {}), got {}",
                    o.world_size, o.world_size, o.rank));
  if (o.join_timeout.count() <= 0 || o.timeout.count() <= 0)
    throw std::invalid_argument("hookforge::distributed: join_timeout and timeout must be > 0");
}

inline double seconds(std::chrono::milliseconds ms) {
  return std::chrono::duration<double>(ms).count();
}

/// Announce this rank in `store` and wait until every rank has (see the top of this file);
/// the ranks' addresses (local_address), by rank.
inline std::vector<std::string> join(c10d::Store& store, const init_options& o,
                                     const std::string& where) {
  const auto deadline = std::chrono::steady_clock::now() + o.join_timeout;
  if (store.add(join_key(o.rank), 1) > 1)
    throw error(fmt::format(
        "hookforge::distributed: rank {} joined {} twice: another process already runs as rank {} "
        "(give each process its own RANK in [0, {}))",
        o.rank, where, o.rank, o.world_size));
  const auto mine = local_address(o);
  store.set(address_key(o.rank), std::vector<std::uint8_t>(mine.begin(), mine.end()));
  const std::int64_t joined = store.add("hookforge/joined", 1);
  auto pause = std::chrono::milliseconds(1);
  for (std::int64_t count = joined; count < o.world_size;
       count = store.add("hookforge/joined", 0)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::vector<int> missing, present;
      for (int r = 0; r < o.world_size; ++r)
        (store.check({join_key(r)}) ? present : missing).push_back(r);
      if (missing.empty()) break;  // the last one came just now
      throw error(
          fmt::format("hookforge::distributed: rank {} waited {:.3g} s for {} {} of {} at {}, "
                      "which did not join (joined: rank{} {}). "
                      "Start every rank with the same WORLD_SIZE, MASTER_ADDR and MASTER_PORT, or "
                      "give the ranks more time "
                      "(join_timeout)",
                      o.rank, seconds(o.join_timeout), missing.size() == 1 ? "rank" : "ranks",
                      fmt::join(missing, ", "), o.world_size, where, present.size() == 1 ? "" : "s",
                      fmt::join(present, ", ")));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  std::vector<std::string> addresses;
  for (int r = 0; r < o.world_size; ++r) {
    const auto bytes = store.get(address_key(r));  // set before that rank counted itself
    addresses.emplace_back(bytes.begin(), bytes.end());
  }
  return addresses;
}

#ifdef USE_C10D_GLOO
inline std::shared_ptr<::gloo::transport::Device> gloo_device(const init_options& o) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  if (is_loopback(o.master_addr))
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

/// Where the backend's collectives run: the CPU for Gloo, this rank's GPU for NCCL.
inline torch::Device collective_device(const init_options& o) {
  if (o.backend != "nccl") return torch::kCPU;
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (gpus == 0)
    throw error(
        "hookforge::distributed: backend \"nccl\" needs a GPU, and this LibTorch sees none");
  const int index = o.local_rank >= 0 ? o.local_rank : o.rank % gpus;
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(index)};
}

/// The backend over `store` (the ranks have joined).
inline c10::intrusive_ptr<backend_type> make_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                     const init_options& o) {
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("hookforge/backend", store);
  if (o.backend == "gloo") {
#ifdef USE_C10D_GLOO
    auto options = c10d::ProcessGroupGloo::Options::create(o.timeout);
    options->devices.push_back(gloo_device(o));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, o.rank, o.world_size, options);
#else
    throw error(
        "hookforge::distributed: this program was built without Gloo (compile with -DUSE_C10D_GLOO "
        "and a "
        "LibTorch that has it; link hookforge::distributed)");
#endif
  }
  if (o.backend == "nccl") {
#ifdef USE_C10D_NCCL
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = o.timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, o.rank, o.world_size, options);
#else
    throw error(
        "hookforge::distributed: this program was built without NCCL (it needs a CUDA build of "
        "LibTorch "
        "and -DUSE_C10D_NCCL; hookforge::distributed defines it when LibTorch has CUDA)");
#endif
  }
  throw std::invalid_argument(fmt::format(
      "hookforge::distributed: backend must be \"gloo\" or \"nccl\", got \"{}\"", o.backend));
}

}  // namespace detail

/// Join the run through `store`, which every rank shares; `where` names it in messages.
/// A world of one returns a single-process group without touching the store.
inline process_group init_with_store(c10::intrusive_ptr<c10d::Store> store, const init_options& o,
                                     const std::string& where = "the store") {
  detail::check_options(o);
  if (o.world_size == 1) return {};
  if (!store)
    throw std::invalid_argument("hookforge::distributed::init_with_store: the store is null");
  if (o.attempt > 0)
    store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("hookforge/attempt/{}", o.attempt),
                                                   std::move(store));
  store->setTimeout(std::max<std::chrono::milliseconds>(o.join_timeout, std::chrono::seconds(1)));
  auto addresses = detail::join(*store, o, where);
  c10::intrusive_ptr<backend_type> backend;
  torch::Device device = torch::kCPU;
  try {
    device = detail::collective_device(o);
    backend = detail::make_backend(store, o);
  } catch (const error&) {
    throw;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw error(fmt::format(
        "hookforge::distributed: rank {} of {} could not set up the {} backend at {}: {}", o.rank,
        o.world_size, o.backend, where, detail::message_of(e)));
  }
  return process_group(std::move(backend), std::move(store), o.timeout, device,
                       std::move(addresses));
}

/// Join the run through a c10d::FileStore at `path`, a file every rank can reach. Start from a
/// path that does not exist yet: a file left by an earlier run would hold its ranks' keys.
inline process_group init_with_file(const std::filesystem::path& path, const init_options& o) {
  detail::check_options(o);
  if (o.world_size == 1) return {};
  auto store = c10::make_intrusive<c10d::FileStore>(path.string(), o.world_size);
  return init_with_store(std::move(store), o, "file " + path.string());
}

/// Join the run through a c10d::TCPStore: rank 0 serves it at master_addr:master_port and
/// the others connect to it, each retrying for up to join_timeout (at least 1 s).
inline process_group init(const init_options& o) {
  detail::check_options(o);
  if (o.world_size == 1) return {};
  if (o.master_port < 1 || o.master_port > 65535)
    throw std::invalid_argument(fmt::format(
        "hookforge::distributed: master_port must be in [1, 65535], got {}", o.master_port));
  const std::string where = fmt::format("{}:{}", o.master_addr, o.master_port);
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(o.master_port);
  options.isServer = o.rank == 0 && !o.launcher_serves_store;
  options.numWorkers = static_cast<std::size_t>(o.world_size);
  options.waitWorkers = false;  // join() waits, and names who is missing
  // LibTorch 1.13's TCPStore counts its connect timeout in whole seconds (300 ms gives up at
  // once, even on its own server), so it gets at least one second.
  options.timeout = std::max<std::chrono::milliseconds>(o.join_timeout, std::chrono::seconds(1));
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(o.master_addr, options);
  } catch (const std::exception& e) {
    throw error(o.rank == 0 ? fmt::format("hookforge::distributed: rank 0 could not serve the "
                                          "rendezvous at {} (is the port in "
                                          "use?): {}",
                                          where, detail::message_of(e))
                            : fmt::format("hookforge::distributed: rank {} could not reach rank 0 "
                                          "at {} within {:.3g} s: {}",
                                          o.rank, where, detail::seconds(options.timeout),
                                          detail::message_of(e)));
  }
  return init_with_store(std::move(store), o, where);
}

/// `defaults` with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and LOCAL_RANK) read from the
/// environment (`getenv` is std::getenv unless a test gives another), or derived from an srun
/// step's (slurm.hpp); under torchrun its attempt and agent store too. WORLD_SIZE > 1 requires
/// RANK and MASTER_ADDR; a malformed value is std::invalid_argument naming the variable.
inline init_options options_from_env(init_options defaults = {},
                                     const getenv_function& getenv = process_getenv) {
  init_options o = std::move(defaults);
  const rank_environment env = read_rank_environment(getenv);
  if (env.world_size) o.world_size = *env.world_size;
  if (env.rank)
    o.rank = *env.rank;
  else if (o.world_size > 1)
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: WORLD_SIZE is {} but RANK is not set: give each "
                    "process its RANK in [0, {})",
                    o.world_size, o.world_size));
  if (env.master_addr)
    o.master_addr = *env.master_addr;
  else if (o.world_size > 1)
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: WORLD_SIZE is {} but MASTER_ADDR is not set: the "
                    "address of rank 0's machine "
                    "(127.0.0.1 on one machine)",
                    o.world_size));
  if (env.master_port) o.master_port = *env.master_port;
  if (env.local_rank) o.local_rank = *env.local_rank;
  o.attempt = env.elastic_restarts;
  o.launcher_serves_store = env.agent_store;
  check_rank(o.rank, o.world_size);
  return o;
}

/// init(options_from_env(defaults)): a single-process group when WORLD_SIZE is unset or 1.
inline process_group init_from_env(init_options defaults = {}) {
  return init(options_from_env(std::move(defaults)));
}

}  // namespace hookforge::distributed
