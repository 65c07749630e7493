// trainer_options::tune_malloc: fit() sets glibc's malloc thresholds
// (torch/runners/malloc_tuning.hpp), seen in fresh processes of this test binary.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/wait.h>
#endif

using namespace tfx;
using namespace hookforge;

#if defined(__GLIBC__)
namespace {
/// Whether glibc maps a block of its own for a request no free heap memory can serve: one
/// larger than all the heap holds free, once its top is given back. Such a request extends
/// the heap when it is under the mmap threshold, and is mapped when it is not. Made in a
/// process of its own (below): a test process's heap soon holds tens of MB free.
bool maps_fresh_block() {
  malloc_trim(0);
  const std::size_t bytes = mallinfo2().fordblks + (4 << 20);
  INFO("free heap memory: " << mallinfo2().fordblks << " bytes");
  REQUIRE(bytes < (32 << 20));  // under the threshold tune_malloc sets
  const auto before = mallinfo2().hblks;
  void* volatile block = std::malloc(bytes);
  const bool mapped = mallinfo2().hblks > before;
  std::free(block);
  return mapped;
}

/// This test binary run again for the hidden case below alone, with `environment` before it;
/// its exit code.
int run_malloc_child(const std::string& environment) {
  const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  const int status =
      std::system((environment + " '" + self + "' '[malloc_child]' > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

// Run by the case after it, in a fresh process: HOOKFORGE_TEST_TUNE=1 or 0 is the option given
// to fit(), HOOKFORGE_TEST_MAPPED=1 or 0 whether a fresh block should still be mapped after it.
TEST_CASE("a fresh process's malloc thresholds before and after fit()", "[.malloc_child]") {
  const char* tune = std::getenv("HOOKFORGE_TEST_TUNE");
  const char* mapped = std::getenv("HOOKFORGE_TEST_MAPPED");
  REQUIRE((tune && mapped));
  auto data = regression_data(2, 4);
  Regressor model;
  torch::optim::SGD sgd(model->parameters(), 0.1);
  TrainingEpochRunner train(sgd);
  ValidationEpochRunner val(inference_options{});
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // glibc's starting threshold, held fixed
  REQUIRE(maps_fresh_block());
  trainer_options options;
  options.tune_malloc = std::string(tune) == "1";
  Trainer trainer(model, train, val, options);
  trainer.fit(data, data, [](const Entry& e) { return mse(e); });
  CHECK(maps_fresh_block() == (std::string(mapped) == "1"));
}

TEST_CASE("fit() sets glibc's malloc thresholds unless told not to or GLIBC_TUNABLES sets them",
          "[trainer][malloc]") {
  // Without the option a fresh block stays mapped; with it the heap grows instead (the block
  // is under the 32 MiB threshold); a GLIBC_TUNABLES that sets glibc.malloc.* wins.
  CHECK(run_malloc_child("HOOKFORGE_TEST_TUNE=0 HOOKFORGE_TEST_MAPPED=1") == 0);
  CHECK(run_malloc_child("HOOKFORGE_TEST_TUNE=1 HOOKFORGE_TEST_MAPPED=0") == 0);
  CHECK(run_malloc_child("GLIBC_TUNABLES=glibc.malloc.check=0 HOOKFORGE_TEST_TUNE=1 "
                         "HOOKFORGE_TEST_MAPPED=1") == 0);
  // The child itself fails where it should: expecting the wrong outcome is a failure.
  CHECK(run_malloc_child("HOOKFORGE_TEST_TUNE=1 HOOKFORGE_TEST_MAPPED=1") != 0);
}
#endif
