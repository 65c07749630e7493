// Honest skips: a case that cannot run on this machine (no CUDA device, no gnuplot, a
// LibTorch without the kernels it compares) says why and is reported as skipped, never as
// passed. Under CTest (which sets HOOKFORGE_TEST_SKIP_CODE and registers that code as the
// tests' SKIP_RETURN_CODE) it prints the reason and exits with that code; run by hand, it
// warns and returns, so that the other cases of the run go on.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/cuda.h>  // LibTorch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

namespace tfx {

/// Ends the current case as skipped, with `reason`. Skip before any CHECK: under CTest the
/// exit code stands for the whole case, and would hide a failure recorded before it.
#define HOOKFORGE_SKIP(reason)                                        \
  do {                                                                \
    if (const char* code = std::getenv("HOOKFORGE_TEST_SKIP_CODE")) { \
      std::printf("skipped: %s\n", std::string(reason).c_str());      \
      std::fflush(stdout);                                            \
      std::_Exit(std::atoi(code));                                    \
    }                                                                 \
    WARN("skipped: " << (reason));                                    \
    return;                                                           \
  } while (false)

/// Skips the case unless a CUDA device is present.
#define HOOKFORGE_REQUIRE_CUDA()                                                                \
  do {                                                                                          \
    if (!torch::cuda::is_available())                                                           \
      HOOKFORGE_SKIP(torch::cuda::device_count() == 0 ? "no CUDA device" : "CUDA unavailable"); \
  } while (false)

}  // namespace tfx
