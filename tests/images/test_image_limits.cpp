// The images layer against files that try to crash, hang or exhaust a run (issue 38): PNG
// transparency of every kind, headers that claim more than they hold, decompression bombs,
// chunks that claim gigabytes, sample counts that overflow, links that lead nowhere or in
// circles, `files` entries outside root. Each case names its number in the issue.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "../torch/file_testing.hpp"
#include "crafted_files.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/images.hpp"
#include "image_writing.hpp"

using namespace hookforge;
namespace fs = std::filesystem;
using tfx::image_error_of;

namespace {

/// What reading `file` must not exceed in memory once its header is refused.
constexpr std::int64_t small_rise = 64ll << 20;

/// `f()` refused with an image_error, taking at most small_rise more memory; its message.
template <class F>
std::string refused_cheaply(F&& f) {
  std::string message;
  const auto rise = tfx::peak_memory_rise([&] { message = image_error_of(f); });
  if (rise >= 0) CHECK(rise < small_rise);
  return message;
}
}  // namespace

TEST_CASE("case 1: PNG transparency of every colour type is dropped, tRNS included",
          "[images][limits]") {
  tfx::temp_dir dir;
  const std::vector<tfx::png_kind> kinds = {
      {PNG_COLOR_TYPE_GRAY, 1, false},       {PNG_COLOR_TYPE_GRAY, 2, true},
      {PNG_COLOR_TYPE_GRAY, 4, false},       {PNG_COLOR_TYPE_GRAY, 8, true},
      {PNG_COLOR_TYPE_GRAY, 16, true},       {PNG_COLOR_TYPE_GRAY, 1, true},
      {PNG_COLOR_TYPE_RGB, 8, false},        {PNG_COLOR_TYPE_RGB, 8, true},
      {PNG_COLOR_TYPE_RGB, 16, true},        {PNG_COLOR_TYPE_PALETTE, 1, true},
      {PNG_COLOR_TYPE_PALETTE, 2, false},    {PNG_COLOR_TYPE_PALETTE, 4, true},
      {PNG_COLOR_TYPE_PALETTE, 8, false},    {PNG_COLOR_TYPE_PALETTE, 8, true},
      {PNG_COLOR_TYPE_GRAY_ALPHA, 8, false}, {PNG_COLOR_TYPE_GRAY_ALPHA, 16, false},
      {PNG_COLOR_TYPE_RGB_ALPHA, 8, false},  {PNG_COLOR_TYPE_RGB_ALPHA, 16, false}};
  for (const auto& kind : kinds) {
    const auto name = "type" + std::to_string(kind.color_type) + "_depth" +
                      std::to_string(kind.bit_depth) + (kind.trns ? "_trns" : "") + ".png";
    INFO(name);
    const auto expected = tfx::write_png_kind(dir.path / name, kind);
    image_info info;
    const auto pixels = read_image(dir.path / name, &info);
    CHECK(info.channels == expected.size(0));
    CHECK(torch::equal(pixels, expected));
  }
  // pngquant's kind, a palette with transparency, in an ImageFolder as y: read and prepared.
  ImageFolder data({.root = dir.path,
                    .files = {"type3_depth8_trns.png"},
                    .color = image_color::y,
                    .scale = 1,
                    .cache = true});
  CHECK((data.get(0).at("input").sizes() == torch::IntArrayRef{1, 3, 5}));
}

TEST_CASE("case 2: a size claimed in a header is refused before anything is allocated",
          "[images][limits]") {
  tfx::temp_dir dir;
  // A PNG of a hundred bytes that says 65536 x 65536 (within the per-side cap).
  const std::string empty_zlib("\x78\x9c\x03\x00\x00\x00\x00\x01", 8);
  std::ofstream(dir.path / "huge.png", std::ios::binary)
      << tfx::png_signature << tfx::ihdr(65536, 65536, PNG_COLOR_TYPE_RGB)
      << tfx::png_chunk("IDAT", empty_zlib) << tfx::png_chunk("IEND", "");
  CHECK(fs::file_size(dir.path / "huge.png") < 100);
  CHECK_THAT(refused_cheaply([&] { read_image(dir.path / "huge.png"); }),
             Catch::Contains("huge.png: is 65536 x 65536 pixels (4294967296), more than "
                             "max_pixels (89478485)"));
  // A real JPEG whose frame header is edited to 65500 x 65500.
  tfx::write_jpeg(dir.path / "edited.jpg", tfx::test_pixels(3, 16, 16));
  tfx::set_jpeg_size(dir.path / "edited.jpg", 65500, 65500);
  CHECK_THAT(refused_cheaply([&] { read_image(dir.path / "edited.jpg"); }),
             Catch::Contains("edited.jpg: is 65500 x 65500 pixels (4290250000), more than "
                             "max_pixels (89478485)"));
  // ImageFolder refuses it at construction, from the header, cached or not.
  CHECK_THAT(refused_cheaply([&] { ImageFolder({.root = dir.path, .cache = true}); }),
             Catch::Contains("edited.jpg: is 65500 x 65500 pixels"));
  // The same bytes from memory (what a fuzzer hands over), under a budget of its own.
  std::ifstream in(dir.path / "huge.png", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(image_error_of([&] { decode_image(bytes, "input", nullptr, {.max_pixels = 1000}); }),
             Catch::StartsWith("input: is 65536 x 65536 pixels (4294967296), more than "
                               "max_pixels (1000)"));
}

TEST_CASE("case 3: decompression bombs are refused by the pixel budget", "[images][limits]") {
  tfx::temp_dir dir;
  tfx::write_blank_png(dir.path / "bomb.png", 10000, 10000);
  tfx::write_jpeg(dir.path / "bomb.jpg", torch::zeros({1, 10000, 10000}, torch::kUInt8), 10);
  CHECK(fs::file_size(dir.path / "bomb.png") < 1'000'000);
  CHECK_THAT(refused_cheaply([&] { read_image(dir.path / "bomb.png"); }),
             Catch::Contains("bomb.png: is 10000 x 10000 pixels (100000000), more than "
                             "max_pixels (89478485)"));
  CHECK_THAT(refused_cheaply([&] { read_image(dir.path / "bomb.jpg"); }),
             Catch::Contains("bomb.jpg: is 10000 x 10000 pixels (100000000)"));
  CHECK_THAT(refused_cheaply([&] { ImageFolder({.root = dir.path, .scale = 2}); }),
             Catch::Contains("bomb.jpg: is 10000 x 10000 pixels (100000000), more than "
                             "max_pixels (89478485)"));
  // A larger budget lets it through; memory_limit then refuses what preparing it would take.
  CHECK_THAT(
      refused_cheaply([&] {
        ImageFolder({.root = dir.path, .scale = 2, .max_pixels = 200'000'000, .memory_limit = 1e9});
      }),
      Catch::Contains("bomb.jpg: is 10000 x 10000 pixels, which take 5.3 GiB to prepare, "
                      "more than memory_limit (0.9 GiB)"));
}

TEST_CASE("case 4: a chunk that claims 2 GB is not allocated", "[images][limits]") {
  tfx::temp_dir dir;
  // Signature, a 1 x 1 gray IHDR, then a tEXt chunk whose length says 2 GB: 45 bytes.
  std::ofstream(dir.path / "text.png", std::ios::binary)
      << tfx::png_signature << tfx::ihdr(1, 1, PNG_COLOR_TYPE_GRAY) << tfx::be32(0x7FFFFFF0u)
      << "tEXtTitl";
  REQUIRE(fs::file_size(dir.path / "text.png") == 45);
  CHECK_THAT(refused_cheaply([&] { read_image(dir.path / "text.png"); }),
             Catch::Contains(
                 "text.png: is not a readable PNG (libpng: the file ends before its chunks do)"));
  // A whole file with an iCCP and a text chunk reads as usual: the chunks are skipped.
  const auto pixels = tfx::test_pixels(1, 2, 3);
  tfx::write_png(dir.path / "plain.png", pixels);
  std::ifstream in(dir.path / "plain.png", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.insert(33, tfx::png_chunk("tEXt", std::string("Comment\0hello", 13)));
  CHECK(torch::equal(decode_image(bytes, "with_text.png"), pixels));
}

TEST_CASE("case 5: repeat times the files must not overflow the sample count", "[images][limits]") {
  tfx::temp_dir dir;
  for (const auto* name : {"a.png", "b.png", "c.png"})
    tfx::write_png(dir.path / name, tfx::test_pixels(1, 4, 4));
  // 3 x 6148914691236517206 is 2^64 + 2: it wrapped to 2 samples, the third file never seen.
  CHECK_THAT(tfx::error_of<std::invalid_argument>(
                 [&] { ImageFolder({.root = dir.path, .repeat = 6148914691236517206}); }),
             Catch::Contains("ImageFolder: repeat 6148914691236517206 times 3 files is more "
                             "samples than an int64 counts (9223372036854775807)"));
  CHECK(ImageFolder({.root = dir.path, .repeat = 1'000'000}).size() == 3'000'000);
}

TEST_CASE("case 6: ImageFolder tells a field's smallest size from the headers, W x H",
          "[images][limits]") {
  tfx::temp_dir dir;
  tfx::write_png(dir.path / "wide.png", tfx::test_pixels(1, 40, 60));
  tfx::write_png(dir.path / "tiny.png", tfx::test_pixels(1, 13, 21));  // 21 x 13
  ImageFolder data({.root = dir.path, .scale = 2});
  const auto target = data.smallest("target");
  REQUIRE(target);
  CHECK(target->file.filename() == "tiny.png");
  CHECK((target->width == 20 && target->height == 12));  // cut to a multiple of 2
  const auto input = data.smallest("input");
  CHECK((input->width == 10 && input->height == 6));
  CHECK(!data.smallest("output"));
  const auto patch = ImageFolder({.root = dir.path, .scale = 2, .patch = 8}).smallest("target");
  CHECK((patch->file.empty() && patch->width == 8));
}

TEST_CASE("case 7: links are followed, dangling and looping ones named, files stay in root",
          "[images][limits]") {
  tfx::temp_dir dir;
  const auto root = dir.path / "root", other = dir.path / "other";
  fs::create_directories(root);
  fs::create_directories(other);
  tfx::write_png(root / "a.png", tfx::test_pixels(1, 4, 4));
  tfx::write_png(other / "b.png", tfx::test_pixels(1, 4, 4));
  fs::create_directory_symlink(other, root / "linked");          // a folder: followed
  fs::create_symlink(other / "b.png", root / "c.png");           // a file: taken
  fs::create_symlink(dir.path / "gone.png", root / "gone.png");  // dangling
  fs::create_symlink(root / "self.png", root / "self.png");      // a loop of one link
  fs::create_directory_symlink(root, root / "linked_root");      // a loop of folders

  capture_warnings warnings;
  ImageFolder data({.root = root});
  REQUIRE(data.files().size() == 3);
  CHECK(data.files()[0] == root / "a.png");
  CHECK(data.files()[1] == root / "c.png");
  CHECK(data.files()[2] == root / "linked" / "b.png");
  REQUIRE(warnings.messages.size() == 3);
  CHECK(warnings.messages == data.warnings());
  const auto all = warnings.messages[0] + "\n" + warnings.messages[1] + "\n" + warnings.messages[2];
  CHECK_THAT(all, Catch::Contains("gone.png' is a link to '" + (dir.path / "gone.png").string() +
                                  "', which does not exist: skipped"));
  CHECK_THAT(all, Catch::Contains("self.png' is a link in a loop of links: skipped"));
  CHECK_THAT(all, Catch::Contains("linked_root' links to '" + fs::canonical(root).string() +
                                  "', a folder it is in (a loop): not followed"));

  auto error_of = [](image_folder_options o) {
    return tfx::error_of<std::invalid_argument>([&] { ImageFolder d(std::move(o)); });
  };
  CHECK_THAT(error_of({.root = root, .files = {"../other/b.png"}}),
             Catch::Contains("files entry '../other/b.png' is not under root '"));
  CHECK_THAT(error_of({.root = root, .files = {(other / "b.png").string()}}),
             Catch::Contains("is not under root"));
  CHECK_THAT(error_of({.root = root, .files = {"a.png", "./a.png"}}),
             Catch::Contains("files names './a.png' twice (entry 2 repeats an earlier one)"));
  CHECK_THAT(error_of({.root = root, .files = {"a.png", "linked/../a.png"}}),
             Catch::Contains("twice"));
  ImageFolder outside({.root = root, .files = {"../other/b.png"}, .files_outside_root = true});
  CHECK(outside.files()[0] == other / "b.png");
}

TEST_CASE("an allocation that fails while a file is prepared is out_of_memory naming it",
          "[images][limits]") {
  tfx::temp_dir dir;
  tfx::write_png(dir.path / "a.png", tfx::test_pixels(1, 4, 4));
  const auto failed = tfx::error_of<out_of_memory>([&] {
    hookforge::detail::images::naming_file(dir.path / "a.png", "preparing it, 4 x 4 pixels", [] {
      return torch::empty({std::int64_t{1} << 50}, torch::kUInt8);
    });
  });
  CHECK_THAT(failed, Catch::StartsWith((dir.path / "a.png").string() +
                                       ": out of memory while preparing it, 4 x 4 pixels"));
  CHECK_THAT(failed, !Catch::Contains("Exception raised from"));  // no c10 frame dump
}
