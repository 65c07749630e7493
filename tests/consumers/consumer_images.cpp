// An installed hookforge::images in a project of its own: a PNG written with libpng (linked
// through hookforge::images), read back by ImageFolder as a super-resolution pair.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <vector>

#include <png.h>

#include <hookforge/images.hpp>

int main() {
  const auto dir = std::filesystem::temp_directory_path() / "hookforge_consumer_images";
  std::filesystem::create_directories(dir);
  std::vector<std::uint8_t> pixels(16 * 16);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = image.height = 16;
  image.format = PNG_FORMAT_GRAY;
  if (!png_image_write_to_file(&image, (dir / "a.png").c_str(), 0, pixels.data(), 0, nullptr))
    return 1;
  hookforge::ImageFolder data({.root = dir, .color = hookforge::image_color::y, .scale = 2});
  const auto sample = data.get(0);
  std::cout << "images consumer: " << data.size() << " image, input " << sample.at("input").sizes()
            << ", target " << sample.at("target").sizes() << "\n";
  std::filesystem::remove_all(dir);
}
