// libFuzzer target for the image readers (hookforge/images/image_file.hpp): each input is the
// bytes of a file that decode_image reads as PNG or JPEG (told by its first bytes), under a
// pixel budget of 4 million, then turned to the unit range and to luma as a dataset would.
// Refusals are image_error; a crash, a leak, a sanitizer report, a hang, or an allocation
// past the budget (libFuzzer's -malloc_limit_mb, which scripts/fuzz.sh sets) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hookforge/images/color.hpp"
#include "hookforge/images/image_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    hookforge::image_info info;
    const auto pixels =
        hookforge::decode_image(bytes, "fuzz input", &info, {.max_pixels = 4'000'000});
    const auto unit = hookforge::to_unit_range(pixels, info.bit_depth);
    (void)hookforge::to_color(unit, hookforge::image_color::y).sum();  // touch every pixel
  } catch (const hookforge::image_error&) {
  }
  return 0;
}
