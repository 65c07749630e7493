// The distributed tests' main: Catch's, once LibTorch's c10d flight recorder is off.
// These tests run their ranks as threads of one process. The recorder (LibTorch 2.x, on by
// default with 2000 entries) is one per process, and records each process group's status in a
// std::map before it takes its lock (FlightRecorder::recordWithResetEnabled): two ranks'
// collectives at once corrupted that map, a SIGSEGV in about one run in ten of the tests whose
// ranks start a collective together. A real run has one rank per process and never races there.
// LibTorch 1.13 has no recorder and ignores the variable.
#define CATCH_CONFIG_RUNNER
#include <cstdlib>

#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  ::setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/1);
  return Catch::Session().run(argc, argv);
}
