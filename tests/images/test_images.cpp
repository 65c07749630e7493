// The images layer: PNG and JPEG reading, colour, the bicubic degradation (against PyTorch's
// values) and ImageFolder (files, samples, randomness per epoch, errors naming the file).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "../torch/file_testing.hpp"
#include "hookforge/images.hpp"
#include "hookforge/torch/data/loader.hpp"
#include "image_writing.hpp"

using namespace hookforge;
namespace fs = std::filesystem;
using tfx::image_error_of;

TEST_CASE("PNG files are read as stored: 8 and 16 bits, gray and RGB", "[images]") {
  tfx::temp_dir dir;
  const auto gray = tfx::test_pixels(1, 5, 7), rgb = tfx::test_pixels(3, 6, 4, 1);
  tfx::write_png(dir.path / "gray.png", gray);
  tfx::write_png(dir.path / "rgb.png", rgb);
  auto wide = (torch::arange(5 * 3, torch::kInt32).reshape({1, 5, 3}) * 4099) % 65536;
  wide[0][0][0] = 65535;
  tfx::write_png(dir.path / "wide.png", wide);

  image_info info;
  CHECK(torch::equal(read_image(dir.path / "gray.png", &info), gray));
  CHECK((info.width == 7 && info.height == 5 && info.channels == 1 && info.bit_depth == 8));
  CHECK(torch::equal(read_image(dir.path / "rgb.png", &info), rgb));
  CHECK((info.channels == 3 && info.bit_depth == 8));
  const auto read_wide = read_image(dir.path / "wide.png", &info);
  CHECK(read_wide.scalar_type() == torch::kInt32);
  CHECK(torch::equal(read_wide, wide));
  CHECK(info.bit_depth == 16);
  CHECK(to_unit_range(read_wide, 16)[0][0][0].item<float>() == 1.0f);

  const auto header = read_image_info(dir.path / "rgb.png");
  CHECK((header.width == 4 && header.height == 6 && header.channels == 3));
}

TEST_CASE("JPEG files are read through TurboJPEG, gray as gray and colour as RGB", "[images]") {
  tfx::temp_dir dir;
  const auto flat = torch::full({3, 16, 16}, 200, torch::kUInt8);
  tfx::write_jpeg(dir.path / "flat.jpg", flat);
  tfx::write_jpeg(dir.path / "gray.JPEG", torch::full({1, 8, 24}, 77, torch::kUInt8));
  image_info info;
  const auto pixels = read_image(dir.path / "flat.jpg", &info);
  CHECK((info.channels == 3 && info.width == 16 && info.bit_depth == 8));
  CHECK((pixels.to(torch::kInt32) - 200).abs().max().item<int>() <= 1);
  const auto gray = read_image(dir.path / "gray.JPEG", &info);
  CHECK((gray.sizes() == torch::IntArrayRef{1, 8, 24}));
  CHECK((gray.to(torch::kInt32) - 77).abs().max().item<int>() <= 1);
}

TEST_CASE("a file that cannot be read as an image is an error naming it", "[images]") {
  tfx::temp_dir dir;
  tfx::write_png(dir.path / "whole.png", tfx::test_pixels(3, 32, 32));
  tfx::write_jpeg(dir.path / "whole.jpg", tfx::test_pixels(3, 32, 32), 90);
  tfx::write_truncated(dir.path / "whole.png", dir.path / "cut.png", 200);
  const auto jpeg_size = fs::file_size(dir.path / "whole.jpg");
  tfx::write_truncated(dir.path / "whole.jpg", dir.path / "cut.jpg", jpeg_size * 3 / 4);
  std::ofstream(dir.path / "notes.png") << "not an image at all";

  const auto missing = image_error_of([&] { read_image(dir.path / "none.png"); });
  CHECK_THAT(missing, Catch::Contains((dir.path / "none.png").string() + ": cannot be opened"));
  CHECK_THAT(image_error_of([&] { read_image(dir.path / "notes.png"); }),
             Catch::Contains("notes.png: is not a PNG or JPEG file"));
  CHECK_THAT(image_error_of([&] { read_image(dir.path / "cut.png"); }),
             Catch::Contains("cut.png: is truncated or corrupt (libpng: "));
  CHECK_THAT(image_error_of([&] { read_image(dir.path / "cut.jpg"); }),
             Catch::Contains("cut.jpg: is truncated or corrupt (libjpeg-turbo: "));
  CHECK_THAT(image_error_of([&] { read_image(dir.path); }), Catch::Contains("is a directory"));
  // The header alone is whole: the truncation shows when the pixels are read.
  CHECK(read_image_info(dir.path / "cut.png").width == 32);
}

TEST_CASE("to_color: BT.601 luma for gray, studio-range Y for y", "[images]") {
  auto rgb = torch::zeros({3, 1, 3});
  rgb.select(2, 1).fill_(1.0);  // white
  rgb[0][0][2] = 1.0;           // red
  const auto y = to_color(rgb, image_color::y);
  CHECK(y[0][0][0].item<float>() == Approx(16.0 / 255));
  CHECK(y[0][0][1].item<float>() == Approx(235.0 / 255));
  CHECK(y[0][0][2].item<float>() == Approx((16 + 65.481) / 255));
  const auto gray = to_color(rgb, image_color::gray);
  CHECK(gray[0][0][1].item<float>() == Approx(1.0));
  CHECK(gray[0][0][2].item<float>() == Approx(0.299));
  CHECK((to_color(gray, image_color::rgb).sizes() == torch::IntArrayRef{3, 1, 3}));
  CHECK(to_color(gray, image_color::y)[0][0][1].item<float>() == Approx(235.0 / 255));
}

TEST_CASE("bicubic_downscale is PyTorch's antialiased bicubic (values from PyTorch 2.11)",
          "[images]") {
  // torch.nn.functional.interpolate(x, scale_factor=1/s, mode="bicubic", align_corners=False,
  // antialias=True) in PyTorch 2.11.0 on x[i][j] = ((8 i + j) * 37 % 64) / 63; PIL's
  // Image.resize(BICUBIC) gives the same to 6e-8.
  auto x = torch::empty({1, 8, 8});
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) x[0][i][j] = static_cast<float>((8 * i + j) * 37 % 64) / 63.0f;
  const auto expected2 = torch::tensor({0.3703656f, 0.5550981f, 0.6236420f, 0.3540546f,  //
                                        0.5390825f, 0.5134137f, 0.5087619f, 0.5832726f,  //
                                        0.3973242f, 0.5063964f, 0.4597351f, 0.5521097f,  //
                                        0.6213393f, 0.5330311f, 0.3835680f, 0.5396701f})
                             .reshape({1, 4, 4});
  CHECK(torch::allclose(bicubic_downscale(x, 2), expected2, 0, 1e-6));
  const auto expected3 =
      torch::tensor({0.4728709f, 0.5922922f, 0.4542277f, 0.4806095f}).reshape({1, 2, 2});
  CHECK(
      torch::allclose(bicubic_downscale(x.narrow(1, 0, 6).narrow(2, 0, 6), 3), expected3, 0, 1e-6));
  CHECK_THROWS_WITH(bicubic_downscale(x.narrow(1, 0, 7), 2),
                    Catch::Contains("sides must be multiples of 2, got 7 x 8"));
  CHECK((bicubic_upscale(expected2, 2).sizes() == torch::IntArrayRef{1, 8, 8}));
  CHECK(
      torch::equal(quantize(torch::tensor({0.1f, 0.5f}), 8) * 255, torch::tensor({26.0f, 128.0f})));
}

namespace {
/// A folder of three PNGs (one in a subfolder) and a text file, made by the test.
struct photo_folder {
  tfx::temp_dir dir;
  photo_folder() {
    fs::create_directories(dir.path / "b");
    tfx::write_png(dir.path / "c.png", tfx::test_pixels(3, 20, 18, 1));
    tfx::write_png(dir.path / "a.png", tfx::test_pixels(3, 17, 24, 2));
    tfx::write_png(dir.path / "b" / "d.png", tfx::test_pixels(1, 16, 16, 3));
    std::ofstream(dir.path / "readme.txt") << "not an image";
  }
};
}  // namespace

TEST_CASE("ImageFolder: the images under a folder, sorted, as super-resolution pairs", "[images]") {
  photo_folder photos;
  ImageFolder data({.root = photos.dir.path, .color = image_color::y, .scale = 2});
  REQUIRE(data.size() == 3);
  CHECK(data.files()[0].filename() == "a.png");
  CHECK(data.files()[1] == photos.dir.path / "b" / "d.png");
  CHECK(data.files()[2].filename() == "c.png");

  const auto a = data.get(0);
  // 17 x 24 is cut to 16 x 24; LR is HR's antialiased bicubic reduction on 8-bit levels.
  const auto hr =
      to_color(to_unit_range(read_image(data.files()[0]), 8), image_color::y).narrow(1, 0, 16);
  CHECK(torch::equal(a.at("target"), hr));
  CHECK(torch::equal(a.at("input"), quantize(bicubic_downscale(hr, 2), 8)));
  CHECK((a.at("bicubic").sizes() == torch::IntArrayRef{1, 16, 24}));
  CHECK(torch::equal(a.at("bicubic"), bicubic_upscale(a.at("input"), 2)));

  ImageFolder plain({.root = photos.dir.path, .files = {"c.png"}});
  REQUIRE(plain.size() == 1);
  CHECK(torch::equal(plain.get(0).at("input"), to_unit_range(read_image(plain.files()[0]), 8)));
}

TEST_CASE("ImageFolder patches: aligned, a function of (seed, epoch, index), cached or not",
          "[images]") {
  photo_folder photos;
  image_folder_options options{
      .root = photos.dir.path, .color = image_color::gray, .scale = 2, .patch = 8, .seed = 5};
  ImageFolder data(options);
  const auto whole = ImageFolder({.root = photos.dir.path, .color = image_color::gray, .scale = 2});
  // The LR patch sits where the HR patch does, at half the coordinates.
  for (std::int64_t epoch = 0; epoch < 4; ++epoch) {
    const auto s = data.get(2, epoch);
    const auto full = whole.get(2);
    bool found = false;
    for (std::int64_t y = 0; y + 4 <= full.at("input").size(1) && !found; ++y)
      for (std::int64_t x = 0; x + 4 <= full.at("input").size(2) && !found; ++x)
        found = torch::equal(s.at("input"), full.at("input").narrow(1, y, 4).narrow(2, x, 4)) &&
                torch::equal(s.at("target"),
                             full.at("target").narrow(1, 2 * y, 8).narrow(2, 2 * x, 8)) &&
                torch::equal(s.at("bicubic"),
                             full.at("bicubic").narrow(1, 2 * y, 8).narrow(2, 2 * x, 8));
    CHECK(found);
  }
  CHECK(torch::equal(data.get(1, 3).at("target"), data.get(1, 3).at("target")));
  CHECK(!torch::equal(data.get(1, 3).at("target"), data.get(1, 4).at("target")));
  CHECK(torch::equal(data.get(1).at("target"), data.get(1, 0).at("target")));

  options.flip = options.rotate = true;
  ImageFolder augmented(options);
  options.cache = true;
  ImageFolder cached(options);
  int transposed = 0;
  for (std::int64_t epoch = 0; epoch < 16; ++epoch) {
    const auto a = augmented.get(0, epoch), c = cached.get(0, epoch);
    for (const auto* field : {"input", "target", "bicubic"})
      CHECK(torch::equal(a.at(field), c.at(field)));
    transposed += !torch::equal(a.at("target"), data.get(0, epoch).at("target"));
  }
  CHECK(transposed > 8);  // most of the 8 flips and rotations of a patch differ from it
}

TEST_CASE("ImageFolder without bicubic: input and target, the same patches, less memory",
          "[images]") {
  photo_folder photos;
  image_folder_options options{.root = photos.dir.path, .color = image_color::gray, .scale = 2};
  auto slim_options = options;
  slim_options.bicubic = false;
  const ImageFolder full(options), slim(slim_options);
  CHECK((full.field_names() == std::vector<std::string>{"input", "target", "bicubic"}));
  CHECK((slim.field_names() == std::vector<std::string>{"input", "target"}));
  CHECK(slim.smallest("bicubic") == std::nullopt);
  CHECK(slim.smallest("target")->width == full.smallest("bicubic")->width);
  for (bool cache : {false, true})
    for (std::int64_t patch : {0, 8}) {
      auto a = options, b = slim_options;
      a.cache = b.cache = cache;
      a.patch = b.patch = patch;
      a.flip = b.flip = patch > 0;
      const ImageFolder with(a), without(b);
      for (std::int64_t epoch : {0, 3}) {
        const auto got = without.get(1, epoch), expected = with.get(1, epoch);
        CHECK((got.names() == std::vector<std::string>{"input", "target"}));
        CHECK(torch::equal(got.at("input"), expected.at("input")));
        CHECK(torch::equal(got.at("target"), expected.at("target")));
      }
    }
  // The memory an image takes, told from its header for memory_limit and the cache's budget,
  // leaves the baseline out: HR and LR only.
  const image_info info = read_image_info(photos.dir.path / "c.png");
  const double with_baseline = hookforge::detail::images::working_bytes(info, 1, 2, true);
  const double without_baseline = hookforge::detail::images::working_bytes(info, 1, 2, false);
  CHECK(without_baseline < with_baseline);
  CHECK(hookforge::detail::images::cached_bytes(info, 1, 2, false) ==
        static_cast<double>(info.width * info.height) * 4 * 1.25);
  CHECK(hookforge::detail::images::cached_bytes(info, 1, 2, true) ==
        static_cast<double>(info.width * info.height) * 4 * 2.25);
}

TEST_CASE("ImageFolder in a DataLoader with workers: each batch drawn in its epoch, resumable",
          "[images][data]") {
  photo_folder photos;
  ImageFolder data({.root = photos.dir.path,
                    .color = image_color::rgb,
                    .scale = 2,
                    .patch = 8,
                    .flip = true,
                    .rotate = true,
                    .seed = 3});
  auto epoch_batches = [](DataLoader<ImageFolder>& loader, std::int64_t epoch) {
    loader.set_epoch(epoch);
    std::vector<torch::Tensor> out;
    for (const auto& batch : loader) out.push_back(batch.at("target").clone());
    return out;
  };
  DataLoader straight(data, {.batch_size = 2, .shuffle = true, .seed = 1, .workers = 2});
  const auto e0 = epoch_batches(straight, 0), e1 = epoch_batches(straight, 1);
  // Batch 0 of epoch 1 is the samples of its indices as drawn in epoch 1.
  const auto order = straight.sampler().indices(1);
  CHECK(torch::equal(e1[0][0], data.get(order[0], 1).at("target")));
  CHECK(!torch::equal(e0[0], e1[0]));

  DataLoader first(data, {.batch_size = 2, .shuffle = true, .seed = 1});
  first.set_epoch(1);
  auto it = first.begin();
  (void)*it;
  const auto state = first.state_dict();
  DataLoader resumed(data, {.batch_size = 2, .shuffle = true, .seed = 1, .workers = 1});
  resumed.load_state_dict(state);
  resumed.set_epoch(1);
  std::vector<torch::Tensor> rest;
  for (const auto& batch : resumed) rest.push_back(batch.at("target"));
  REQUIRE(rest.size() == 1);
  CHECK(torch::equal(rest[0], e1[1]));
}

TEST_CASE("ImageFolder's errors name the option, the folder or the file", "[images]") {
  photo_folder photos;
  auto error_of = [](image_folder_options o) {
    return tfx::error_of<std::exception>([&] { ImageFolder data(std::move(o)); });
  };
  CHECK(error_of({}) == "ImageFolder: root must be given");
  CHECK_THAT(
      error_of({.root = photos.dir.path, .scale = 3, .patch = 8}),
      Catch::Contains("patch must be 0 (whole images) or a positive multiple of scale 3, got 8"));
  CHECK_THAT(error_of({.root = photos.dir.path, .flip = true}),
             Catch::Contains("flip and rotate need patch > 0"));
  CHECK_THAT(error_of({.root = photos.dir.path / "none", .missing_hint = "install the photos"}),
             Catch::Contains("none' does not exist; install the photos"));
  fs::create_directories(photos.dir.path / "empty");
  CHECK_THAT(error_of({.root = photos.dir.path / "empty"}),
             Catch::Contains("no PNG or JPEG file under"));
  CHECK_THAT(error_of({.root = photos.dir.path, .files = {"a.png", "z.png"}}),
             Catch::Contains("'z.png' is not a file under"));
  CHECK_THAT(error_of({.root = photos.dir.path, .files = {"c.pgn"}}),
             Catch::EndsWith("' (closest: c.png)"));
  CHECK_THAT(error_of({.root = photos.dir.path, .scale = 2, .patch = 18}),
             Catch::Contains("a.png: is 24 x 17 pixels, smaller than the patch, 18 x 18"));
  CHECK_THAT(error_of({.root = photos.dir.path, .bit_depth = 16}),
             Catch::Contains("a.png: has 8 bits per sample, but bit_depth is 16"));
  std::ofstream(photos.dir.path / "b" / "broken.png") << "garbage";
  CHECK_THAT(error_of({.root = photos.dir.path}),
             Catch::Contains("broken.png: is not a PNG or JPEG"));
  fs::remove(photos.dir.path / "b" / "broken.png");
  // A file cut after the constructor read its header fails at get, naming it.
  ImageFolder data({.root = photos.dir.path});
  tfx::write_truncated(data.files()[2], data.files()[2], 100);
  CHECK_THAT(tfx::error_of<image_error>([&] { data.get(2); }),
             Catch::Contains("c.png: is truncated or corrupt"));
}

TEST_CASE("ImageFolder with lr_root: LR files matched by name, checked against HR's size",
          "[images]") {
  tfx::temp_dir dir;
  fs::create_directories(dir.path / "hr" / "sub");
  fs::create_directories(dir.path / "lr" / "sub");
  const auto a = tfx::test_pixels(3, 16, 21, 1), b = tfx::test_pixels(1, 12, 12, 2);
  tfx::write_png(dir.path / "hr" / "a.png", a);
  tfx::write_png(dir.path / "hr" / "sub" / "b.png", b);
  // The LR files: a's made here by a reduction of its own (not ImageFolder's), b's as JPEG.
  const auto a_low =
      torch::nn::functional::avg_pool2d(a.narrow(2, 0, 20).to(torch::kFloat).unsqueeze(0),
                                        torch::nn::functional::AvgPool2dFuncOptions(2))
          .squeeze(0)
          .round()
          .to(torch::kUInt8);
  tfx::write_png(dir.path / "lr" / "ax2.png", a_low);
  tfx::write_jpeg(dir.path / "lr" / "sub" / "bx2.jpg", tfx::test_pixels(1, 6, 6, 3));

  ImageFolder data(
      {.root = dir.path / "hr", .scale = 2, .lr_root = dir.path / "lr", .lr_suffix = "x2"});
  REQUIRE(data.size() == 2);
  const auto first = data.get(0);
  CHECK(torch::equal(first.at("input"), to_unit_range(a_low, 8)));
  CHECK(torch::equal(first.at("target"), to_unit_range(a, 8).narrow(2, 0, 20)));
  CHECK(torch::equal(first.at("bicubic"), bicubic_upscale(first.at("input"), 2)));
  CHECK((data.get(1).at("input").sizes() == torch::IntArrayRef{3, 6, 6}));  // gray as RGB

  // Cached and patched: LR and HR stay aligned.
  ImageFolder patches({.root = dir.path / "hr",
                       .scale = 2,
                       .patch = 4,
                       .cache = true,
                       .lr_root = dir.path / "lr",
                       .lr_suffix = "x2"});
  CHECK((patches.get(0, 1).at("input").sizes() == torch::IntArrayRef{3, 2, 2}));

  auto error_of = [](image_folder_options o) {
    return tfx::error_of<std::exception>([&] { ImageFolder d(std::move(o)); });
  };
  CHECK_THAT(error_of({.root = dir.path / "hr", .scale = 2, .lr_root = dir.path / "lr"}),
             Catch::Contains("no LR image 'a.{png,jpg,jpeg}' under lr_root '"));
  CHECK_THAT(error_of({.root = dir.path / "hr", .lr_root = dir.path / "lr"}),
             Catch::Contains("lr_root needs scale >= 2"));
  tfx::write_png(dir.path / "lr" / "ax2.png", tfx::test_pixels(3, 8, 11));
  CHECK_THAT(
      error_of(
          {.root = dir.path / "hr", .scale = 2, .lr_root = dir.path / "lr", .lr_suffix = "x2"}),
      Catch::Contains("ax2.png: is 11 x 8 pixels, but its HR image '" +
                      (dir.path / "hr" / "a.png").string() +
                      "' is 21 x 16: expected 10 x 8 at scale 2"));
}
