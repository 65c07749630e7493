// Weights across the language border (hookforge/torch/weights/): .pth and safetensors written
// and read back, the entry a checkpoint's weights are in, names mapped into a model, and
// hostile files refused. Python's side (torch.load, safetensors, Lightning, MMEngine) is
// tests/weights/interop.py.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <caffe2/serialize/inline_container.h>
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "file_testing.hpp"
#include "hookforge/torch/io/pretrained.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

using hookforge::checkpoint_error;
using hookforge::named_tensors;
using hookforge::weights_format;
using tfx::error_of;
using namespace std::string_literals;  // pickles hold NUL bytes

namespace {

// Same dtype, shape and bytes.
bool identical(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const auto x = a.contiguous(), y = b.contiguous();
  return x.nbytes() == y.nbytes() && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

named_tensors every_dtype() {
  torch::manual_seed(7);
  auto base = torch::arange(24, torch::kFloat32);
  return {{"f32", torch::randn({3, 4})},
          {"f64", torch::randn({2}, torch::kFloat64)},
          {"f16", torch::randn({5}).to(torch::kFloat16)},
          {"bf16", torch::randn({2, 2}).to(torch::kBFloat16)},
          {"i8", torch::tensor({-3, 4}, torch::kInt8)},
          {"u8", torch::tensor({255, 0}, torch::kUInt8)},
          {"i16", torch::tensor({-30000}, torch::kInt16)},
          {"i32", torch::tensor({1 << 30}, torch::kInt32)},
          {"i64", torch::tensor({std::int64_t{1} << 40}, torch::kInt64)},
          {"bool", torch::tensor({true, false, true})},
          {"scalar", torch::tensor(3.5)},
          {"empty", torch::zeros({0, 3})},
          {"transposed", torch::randn({3, 5}).t()},
          {"base", base},
          {"slice", base.slice(0, 5, 9)},
          {"tied", base}};
}

// A torch.save-shaped zip whose data.pkl is `pickle`, with a storage record data/0 of `bytes`.
void write_archive(const std::filesystem::path& file, const std::string& pickle,
                   std::size_t bytes = 16) {
  caffe2::serialize::PyTorchStreamWriter writer(file.string());
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  writer.writeRecord("byteorder", "little", 6);
  const std::vector<char> zeros(bytes, 0);
  writer.writeRecord("data/0", zeros.data(), zeros.size());
  writer.writeEndOfFile();
}

// A pickle of {"w": tensor of storage 0}: ('storage', FloatStorage, '0', 'cpu', numel), with
// the tensor's offset, size and stride as given.
std::string tensor_pickle(int numel, int offset, int size, int stride) {
  auto i32 = [](int v) { return "J"s + std::string(reinterpret_cast<char*>(&v), 4); };
  return "\x80\x02}X\x01\x00\x00\x00"
         "w"s +
         "ctorch._utils\n_rebuild_tensor_v2\n(" +
         "(X\x07\x00\x00\x00"
         "storage"s +
         "ctorch\nFloatStorage\n" +
         "X\x01\x00\x00\x00"
         "0"s +
         "X\x03\x00\x00\x00"
         "cpu"s +
         i32(numel) + "tQ" + i32(offset) + "(" + i32(size) + "t(" + i32(stride) + "t\x89}tRs.";
}

}  // namespace

TEST_CASE("write_weights and read_weights: .pth and safetensors hold every dtype bit for bit",
          "[weights]") {
  tfx::temp_dir dir;
  const auto tensors = every_dtype();
  for (const auto format : {weights_format::pth, weights_format::safetensors}) {
    const auto file = dir.path / ("w" + std::string(hookforge::weights_suffix(format)));
    hookforge::write_weights(file, tensors, format, {{"producer", "hookforge"}});
    const auto read = hookforge::read_weights(file);
    CHECK(read.kind ==
          (format == weights_format::pth ? "PyTorch archive (torch.save)" : "safetensors"));
    REQUIRE(read.tensors.size() == tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      INFO(tensors[i].first);
      CHECK(read.tensors[i].first == tensors[i].first);
      CHECK(identical(read.tensors[i].second, tensors[i].second));
    }
    if (format == weights_format::pth) {  // views and ties share one storage, as written
      const auto storage = [&](int i) {
        return read.tensors[i].second.storage().unsafeGetStorageImpl();
      };
      CHECK(storage(13) == storage(14));
      CHECK(storage(13) == storage(15));
      CHECK(read.tensors[14].second.storage_offset() == 5);
    } else {
      CHECK(read.metadata.at("producer") == "hookforge");
    }
  }
}

TEST_CASE("state_dict lists a module's tensors in PyTorch's order, and save_weights writes them",
          "[weights]") {
  torch::nn::Sequential net{torch::nn::Conv2d(1, 2, 3), torch::nn::BatchNorm2d(2),
                            torch::nn::Linear(3, 1)};
  std::vector<std::string> names;
  for (const auto& [name, tensor] : hookforge::state_dict(*net)) names.push_back(name);
  CHECK(names == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias",
                                          "1.running_mean", "1.running_var",
                                          "1.num_batches_tracked", "2.weight", "2.bias"});
  tfx::temp_dir dir;
  hookforge::save_weights(*net, dir.path / "net.pth", weights_format::pth);
  CHECK(hookforge::read_weights(dir.path / "net.pth").tensors.size() == 9);
}

TEST_CASE("read_weights takes a checkpoint's weights entry, or the one `key` names", "[weights]") {
  tfx::temp_dir dir;
  const named_tensors weights{{"net.0.weight", torch::ones({2})}};
  hookforge::write_weights(dir.path / "flat.pth", weights, weights_format::pth);
  const auto flat = hookforge::read_weights(dir.path / "flat.pth");
  CHECK(flat.entry.empty());
  CHECK(flat.describe() == "PyTorch archive (torch.save)");

  // {"epoch": 3, "state_dict": {...}, "ema": {...}}: "state_dict" by default, "ema" by key.
  const std::string tensor = tensor_pickle(4, 0, 4, 1);               // {"w": t}
  const std::string dict_of_w = tensor.substr(2, tensor.size() - 3);  // without PROTO and STOP
  const std::string pickle =
      "\x80\x02}(X\x05\x00\x00\x00"
      "epochK\x03"s +
      "X\x03\x00\x00\x00"
      "ema"s +
      dict_of_w +
      "X\x0a\x00\x00\x00"
      "state_dict"s +
      dict_of_w + "u.";
  write_archive(dir.path / "ckpt.pth", pickle);
  const auto found = hookforge::read_weights(dir.path / "ckpt.pth");
  CHECK(found.entry == "state_dict");
  CHECK(found.describe() ==
        "PyTorch archive (torch.save), entry 'state_dict' (also holding tensors: 'ema')");
  CHECK(hookforge::read_weights(dir.path / "ckpt.pth", {.key = "ema"}).entry == "ema");
  CHECK_THAT(
      error_of<std::invalid_argument>(
          [&] { hookforge::read_weights(dir.path / "ckpt.pth", {.key = "model"}); }),
      Catch::Contains(
          "ckpt.pth' has no entry 'model'; the entries that hold tensors: [ema, state_dict]"));
  CHECK_THAT(error_of<std::invalid_argument>(
                 [&] { hookforge::read_weights(dir.path / "ckpt.pth", {.key = "epoch"}); }),
             Catch::Contains("entry 'epoch' holds a int, not a dict of tensors"));
}

TEST_CASE("load_pretrained maps a PyTorch model's names: strip_prefix, rename, closest names",
          "[weights][pretrained]") {
  tfx::temp_dir dir;
  torch::manual_seed(3);
  torch::nn::Sequential trained{torch::nn::Linear(2, 3), torch::nn::ReLU(),
                                torch::nn::Linear(3, 1)};
  named_tensors lightning;  // a LightningModule's self.net, wrapped by DDP
  for (auto& [name, tensor] : hookforge::state_dict(*trained))
    lightning.emplace_back("module.net." + name, tensor);
  hookforge::write_weights(dir.path / "l.pth", lightning, weights_format::pth);

  torch::nn::Sequential fresh{torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 1)};
  const auto message = error_of<std::invalid_argument>(
      [&] { hookforge::load_pretrained(*fresh, {.file = dir.path / "l.pth"}); });
  CHECK_THAT(message,
             Catch::Contains(
                 "missing from the file: 0.weight (closest in the file: module.net.0.weight)"));
  const auto report = hookforge::load_pretrained(
      *fresh,
      {.file = dir.path / "l.pth", .strip_prefix = {"module."}, .rename = {{"^net\\.", ""}}});
  CHECK(report.loaded.size() == 4);
  CHECK(report.renamed.front() ==
        std::pair<std::string, std::string>{"module.net.0.weight", "0.weight"});
  CHECK_THAT(report.summary(), Catch::Contains("renamed 4: module.net.0.weight -> 0.weight"));
  CHECK(torch::equal(fresh[2]->as<torch::nn::Linear>()->weight,
                     trained[2]->as<torch::nn::Linear>()->weight));
  CHECK_THAT(error_of<std::invalid_argument>([&] {
               hookforge::load_pretrained(*fresh,
                                          {.file = dir.path / "l.pth", .rename = {{"(", ""}}});
             }),
             Catch::Contains("rename '(' is not a regular expression"));
}

TEST_CASE("read_weights refuses a hostile .pth naming the file and what is wrong, running nothing",
          "[weights][hostile]") {
  tfx::temp_dir dir;
  auto refused = [&](const std::string& name, const std::string& pickle, std::size_t bytes = 16) {
    write_archive(dir.path / name, pickle, bytes);
    return error_of<checkpoint_error>([&] { hookforge::read_weights(dir.path / name); });
  };
  // A global off the allow-list, with the command it would run: refused by name.
  const auto system = refused("system.pth",
                              "\x80\x02"
                              "cos\nsystem\nX\x04\x00\x00\x00"
                              "touchR."s);
  CHECK_THAT(system,
             Catch::Contains("system.pth' (data.pkl): the pickle names the global os.system"));
  CHECK_THAT(system, Catch::Contains("nothing of it ran") && Catch::Contains("(at byte 2)"));
  CHECK_THAT(refused("eval.pth",
                     "\x80\x02"
                     "\x8c\x08"
                     "builtins\x8c\x04"
                     "eval\x93."),
             Catch::Contains("the global builtins.eval"));
  CHECK_THAT(refused("inst.pth", "\x80\x02(ios\nsystem\n."), Catch::Contains("opcode 0x69"));
  // Lies about sizes: a truncated pickle, a tensor outside its storage, a storage larger than
  // its record, a string longer than the pickle.
  const auto good = tensor_pickle(4, 0, 4, 1);
  CHECK_THAT(refused("short.pth", good.substr(0, good.size() / 2)),
             Catch::Contains("(truncated or corrupt)"));
  CHECK_THAT(refused("shorter.pth", good.substr(0, 6)),
             Catch::Contains("bytes short (truncated or corrupt)"));
  CHECK_THAT(refused("outside.pth", tensor_pickle(4, 2, 4, 1)),
             Catch::Contains("reaches element 5, past the storage's 4"));
  CHECK_THAT(refused("stride.pth", tensor_pickle(4, 0, 2, 1 << 30)),
             Catch::Contains("past the storage"));
  CHECK_THAT(refused("numel.pth", tensor_pickle(1 << 30, 0, 4, 1)),
             Catch::Contains("storage '0' claims 1073741824 elements, more than the file's"));
  CHECK_THAT(refused("record.pth", tensor_pickle(8, 0, 4, 1)),
             Catch::Contains("record data/0 holds 16 bytes"));
  CHECK_THAT(refused("string.pth",
                     "\x80\x02X\xff\xff\xff\x7f"
                     "abc."s),
             Catch::Contains("ends 2147483643 bytes short"));
  // Depth and cycles: 100,000 nested tuples, a list inside itself. Nothing recurses.
  CHECK_THAT(refused("deep.pth", "\x80\x02]" + std::string(100000, '\x85') + "."),
             Catch::Contains("holds a tuple with no entry hookforge takes for the weights"));
  CHECK_THAT(refused("cycle.pth",
                     "\x80\x02]q\x00h\x00"
                     "a."s),
             Catch::Contains("holds a list"));
  // Not an archive at all, or a damaged one.
  hookforge::write_weights(dir.path / "good.pth", {{"w", torch::ones({64})}}, weights_format::pth);
  {
    std::ifstream in(dir.path / "good.pth", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(dir.path / "cut.pth", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THAT(error_of<checkpoint_error>([&] { hookforge::read_weights(dir.path / "cut.pth"); }),
             Catch::Contains("cut.pth' is not a readable zip archive"));
  std::ofstream(dir.path / "legacy.pth", std::ios::binary)
      << std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
  CHECK_THAT(error_of<checkpoint_error>([&] { hookforge::read_weights(dir.path / "legacy.pth"); }),
             Catch::Contains("format before PyTorch 1.6"));
}
