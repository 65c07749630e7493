// hookforge/images/image_error.hpp — every failure with an image file names the file.
//
//   throw hookforge::image_error(file, "is 40 x 30 pixels, smaller than the patch, 48 x 48");
//   auto hr = hookforge::detail::images::naming_file(file, [&] { return prepare(file); });
//
// image_error's what() starts with the file's path. naming_file runs the work done on one
// file (decoding, colour, the bicubic forms) so that whatever goes wrong in it still names
// the file: an allocation that fails is hookforge::out_of_memory ("photo.png: out of memory
// while ..."), and LibTorch's other errors lose their C++ frame dump, which says nothing of
// the file and buries the one line that matters.
#pragma once

#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include <c10/util/Exception.h>

#include "hookforge/torch/runners/memory_failure.hpp"

namespace hookforge {

/// A file that could not be read as an image; what() starts with its path.
class image_error : public std::runtime_error {
 public:
  image_error(std::filesystem::path file, const std::string& what)
      : std::runtime_error(file.string() + ": " + what), file_(std::move(file)) {}
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
};

namespace detail::images {

/// `f()`, done for `file` (`doing`: "decoding it, 9000 x 9000 pixels"): a memory failure in
/// it is out_of_memory naming the file, another LibTorch error an image_error naming it.
/// image_error and out_of_memory pass as they are.
template <class F>
decltype(auto) naming_file(const std::filesystem::path& file, const std::string& doing, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::bad_alloc&) {
    throw out_of_memory(file.string() + ": out of memory while " + doing + " (std::bad_alloc)");
  } catch (const c10::Error& e) {
    const auto memory = hookforge::detail::memory_failure_message(e);
    if (!memory.empty())
      throw out_of_memory(file.string() + ": out of memory while " + doing + ": " + memory);
    throw image_error(file, "failed while " + doing + ": " + e.what_without_backtrace());
  }
}

}  // namespace detail::images

}  // namespace hookforge
