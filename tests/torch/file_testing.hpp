// A scratch directory per test, whole-file reads, and the error a checkpoint load must
// throw: shared by the file-writing tests.
#pragma once

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "hookforge/torch/io/checkpoint.hpp"

namespace tfx {

/// A fresh, empty directory under the system's temp directory, removed with its contents.
struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string& prefix = "hookforge_test") {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// The names of the files in the directory, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& f : std::filesystem::directory_iterator(path))
      out.push_back(f.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

/// The whole file, as bytes.
inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The message of the error `fn` must throw, an E (a checkpoint_error unless told); a test
/// failure when it throws none.
template <class E = hookforge::checkpoint_error, class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL(
      "expected an exception of the type error_of was given (by default "
      "hookforge::checkpoint_error)");
  return {};
}

}  // namespace tfx
