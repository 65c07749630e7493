// hookforge/run/machine.hpp — what this machine has, for the config checks that refuse what
// cannot fit before anything is allocated: a thread or worker count above its cores hangs
// or fails with "Resource temporarily unavailable", an allocation above its memory fails
// with a bare std::bad_alloc, after the output directory exists.
//
//   if (threads > run::machine_cores()) ...   // std::thread::hardware_concurrency(), >= 1
//   run::affordable(bytes)                     // at most half the physical memory
#pragma once

#include <cstdint>
#include <string>
#include <thread>

#include <fmt/core.h>
#include <unistd.h>

namespace hookforge::run {

/// The cores this process may use (std::thread::hardware_concurrency(); 1 where unknown).
inline std::int64_t machine_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<std::int64_t>(n);
}

/// A count of threads a config asks for (system.threads, a loader's workers): from 0 to
/// the cores. More hang or fail to start.
inline bool within_cores(const std::int64_t& threads) {
  return threads >= 0 && threads <= machine_cores();
}

/// The physical memory in bytes (sysconf); 0 where unknown.
inline std::uint64_t machine_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

/// What one allocation a config asks for may take: half the physical memory, leaving the
/// rest to the run (the model, its batches, LibTorch); 0 where the memory is unknown.
inline double allocation_budget() { return static_cast<double>(machine_memory()) / 2; }

/// `bytes` fit in allocation_budget() (true where the memory is unknown).
inline bool affordable(double bytes) {
  const double budget = allocation_budget();
  return budget == 0 || bytes <= budget;
}

/// "24.0 GiB": a size as the messages show it.
inline std::string gibibytes(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace hookforge::run
