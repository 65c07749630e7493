// hookforge_peer_data DIR: writes the default job's images (configs/default.yaml: 4096
// training and 128 validation samples of ProceduralImages, 48 x 48, scale 2, seeds 1 and 2)
// as raw float32 files for the Python peers, so that every framework trains on the same
// tensors:
//   DIR/{train,val}_{input,target,bicubic}.f32   little-endian, C order
//   DIR/shapes.json                              {"train_input": [4096, 1, 24, 24], ...}
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "hookforge/torch/data/procedural_images.hpp"

namespace {

void write_split(const std::filesystem::path& dir, const std::string& split,
                 const hookforge::ProceduralImages& data, std::string& shapes) {
  std::vector<hookforge::Entry> samples;
  for (std::size_t i = 0; i < data.size(); ++i) samples.push_back(data.get(i));
  for (const char* field : {"input", "target", "bicubic"}) {
    std::vector<torch::Tensor> column;
    for (const auto& s : samples) column.push_back(s.at(field));
    const auto stacked = torch::stack(column).contiguous();
    const auto name = split + "_" + field;
    std::ofstream out(dir / (name + ".f32"), std::ios::binary);
    out.write(static_cast<const char*>(stacked.data_ptr()),
              static_cast<std::streamsize>(stacked.numel() * sizeof(float)));
    if (!out) throw std::runtime_error("cannot write " + (dir / (name + ".f32")).string());
    std::string dims;
    for (auto d : stacked.sizes()) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    shapes += (shapes.size() > 1 ? ", " : "") + ("\"" + name + "\": [" + dims + "]");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::string shapes = "{";
  write_split(dir, "train",
              hookforge::ProceduralImages({.count = 4096, .size = 48, .scale = 2, .seed = 1}),
              shapes);
  write_split(dir, "val",
              hookforge::ProceduralImages({.count = 128, .size = 48, .scale = 2, .seed = 2}),
              shapes);
  std::ofstream(dir / "shapes.json") << shapes << "}\n";
  std::printf("%s: the default job's images\n", dir.c_str());
}
