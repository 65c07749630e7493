// hookforge's side of the weights interop tests (tests/weights/interop.py writes and reads
// the files with Python's own torch, safetensors, Lightning and MMEngine, and compares):
//
//   probe read FILE OUTDIR [KEY]   hookforge::read_weights(FILE, {.key = KEY}); writes
//       OUTDIR/manifest.txt, a line per tensor in the order read:
//         NAME <TAB> DTYPE <TAB> SHAPE <TAB> RAW <TAB> GROUP
//       DTYPE as Python names it ("float32"), SHAPE comma-separated (empty for a scalar),
//       RAW the file OUTDIR/<index>.bin holding the tensor's bytes (contiguous, row-major),
//       GROUP a number equal for tensors that share one storage; OUTDIR/describe.txt
//       (weights_file::describe()), OUTDIR/info.txt (kind, entry and other entries, a
//       line each: "kind<TAB>...", "entry<TAB>...", "other<TAB>..."), OUTDIR/metadata.txt
//       (KEY<TAB>VALUE a line)
//   probe write FORMAT OUTFILE INDIR   hookforge::write_weights(OUTFILE, tensors, FORMAT) of
//       the tensors INDIR/manifest.txt lists, in its format above plus a sixth column LAYOUT
//       saying how each tensor is built:
//         -       its own contiguous tensor; one of the same GROUP, dtype and shape as an
//                 earlier one is that tensor (a tie, two names of one tensor)
//         t       its own, non-contiguous: the transpose of a contiguous transpose
//         view:K  a view of the storage of the first tensor of its GROUP, from element K
//         pad:K   its own storage, K elements longer, the tensor from element K
//       and INDIR/metadata.txt, when there, as the metadata (KEY<TAB>VALUE a line)
//   probe read-each FILE...   read_weights of each FILE in turn, in one process (LibTorch's
//       loading is most of a run): a line each, "read", or "error: <what()>" with its
//       newlines written as \n
//   probe espcn WEIGHTS SCALE IN OUT N C H W [residual]   hookforge's ESPCN (scale SCALE,
//       C channels, residual when the last argument says so) loaded with load_pretrained
//       from WEIGHTS, in eval mode on the raw float32 input IN of shape [N, C, H, W]; OUT:
//       its output, raw float32
//   probe save-espcn FORMAT OUTFILE SCALE SEED   a fresh ESPCN (one channel) after
//       torch::manual_seed(SEED), written with hookforge::save_weights
//   probe dtypes   the dtypes this LibTorch has, a line each, as Python names them
//       ("float32", "uint16"): 1.13 lacks uint16/32/64 and the float8 and float4 types
//
// A file hookforge refuses or cannot read: "error: <what()>" on stderr, exit code 3.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/io/pretrained.hpp"
#include "hookforge/torch/models/espcn.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

namespace {

namespace fs = std::filesystem;

/// A usage error: exit code 2, not the 3 of a file hookforge refuses.
struct usage_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The dtypes this LibTorch has, by the names Python gives them (str(torch.float32) without
// "torch."); compat.hpp says which releases lack which.
const std::vector<std::pair<std::string, c10::ScalarType>>& dtype_names() {
  static const std::vector<std::pair<std::string, c10::ScalarType>> names{
      {"float32", c10::kFloat},
      {"float64", c10::kDouble},
      {"float16", c10::kHalf},
      {"bfloat16", c10::kBFloat16},
      {"int8", c10::kChar},
      {"int16", c10::kShort},
      {"int32", c10::kInt},
      {"int64", c10::kLong},
      {"uint8", c10::kByte},
      {"bool", c10::kBool},
      {"complex64", c10::kComplexFloat},
      {"complex128", c10::kComplexDouble},
#if HOOKFORGE_HAS_UNSIGNED_DTYPES
      {"uint16", c10::ScalarType::UInt16},
      {"uint32", c10::ScalarType::UInt32},
      {"uint64", c10::ScalarType::UInt64},
      {"float8_e4m3fn", c10::ScalarType::Float8_e4m3fn},
      {"float8_e5m2", c10::ScalarType::Float8_e5m2},
      {"float8_e4m3fnuz", c10::ScalarType::Float8_e4m3fnuz},
      {"float8_e5m2fnuz", c10::ScalarType::Float8_e5m2fnuz},
#endif
#if HOOKFORGE_HAS_MICROSCALING_DTYPES
      {"float8_e8m0fnu", c10::ScalarType::Float8_e8m0fnu},
      {"float4_e2m1fn_x2", c10::ScalarType::Float4_e2m1fn_x2},
#endif
  };
  return names;
}

std::string dtype_name(c10::ScalarType type) {
  for (const auto& [name, t] : dtype_names())
    if (t == type) return name;
  return std::string("unknown:") + c10::toString(type);
}

c10::ScalarType dtype_of(const std::string& name) {
  for (const auto& [n, t] : dtype_names())
    if (n == name) return t;
  throw usage_error("no dtype " + name);
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, by)) out.push_back(item);
  if (!text.empty() && text.back() == by) out.emplace_back();
  return out;
}

std::vector<std::int64_t> shape_of(const std::string& text) {
  std::vector<std::int64_t> shape;
  if (!text.empty())
    for (const auto& n : split(text, ',')) shape.push_back(std::stoll(n));
  return shape;
}

std::string shape_text(c10::IntArrayRef sizes) {
  std::string out;
  for (std::size_t d = 0; d < sizes.size(); ++d)
    out += (d == 0 ? "" : ",") + std::to_string(sizes[d]);
  return out;
}

void write_bytes(const fs::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// The tensor's bytes as Python's t.contiguous() holds them.
std::string bytes_of(const torch::Tensor& t) {
  const auto c = t.contiguous().cpu();
  if (c.nbytes() == 0) return {};
  return {static_cast<const char*>(c.data_ptr()), c.nbytes()};
}

/// A tensor of `dtype` and `shape` holding the bytes of `path`, checked to be as many.
torch::Tensor read_tensor(const fs::path& path, c10::ScalarType dtype,
                          const std::vector<std::int64_t>& shape) {
  auto t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw usage_error("cannot open " + path.string());
  if (static_cast<std::size_t>(in.tellg()) != t.nbytes())
    throw usage_error(path.string() + " holds " + std::to_string(in.tellg()) + " bytes, not " +
                      std::to_string(t.nbytes()));
  in.seekg(0);
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
  return t;
}

std::map<std::string, std::string> read_metadata(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) throw usage_error(path.string() + ": a line without a tab");
    out[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return out;
}

int read(const std::vector<std::string>& a) {
  if (a.size() < 2 || a.size() > 3) throw usage_error("read FILE OUTDIR [KEY]");
  const fs::path out = a[1];
  fs::create_directories(out);
  hookforge::weights_read_options options;
  if (a.size() == 3) options.key = a[2];
  const auto weights = hookforge::read_weights(a[0], options);
  std::map<const c10::StorageImpl*, std::size_t> groups;  // storage -> group, by first use
  std::ofstream manifest(out / "manifest.txt");
  for (std::size_t i = 0; i < weights.tensors.size(); ++i) {
    const auto& [name, t] = weights.tensors[i];
    const auto raw = out / (std::to_string(i) + ".bin");
    const auto bytes = bytes_of(t);
    write_bytes(raw, bytes.data(), bytes.size());
    const auto group =
        groups.try_emplace(t.storage().unsafeGetStorageImpl(), groups.size()).first->second;
    manifest << name << '\t' << dtype_name(t.scalar_type()) << '\t' << shape_text(t.sizes()) << '\t'
             << raw.string() << '\t' << group << '\n';
  }
  std::ofstream(out / "describe.txt") << weights.describe() << '\n';
  std::ofstream info(out / "info.txt");
  info << "kind\t" << weights.kind << "\nentry\t" << weights.entry << '\n';
  for (const auto& other : weights.other_entries) info << "other\t" << other << '\n';
  std::ofstream metadata(out / "metadata.txt");
  for (const auto& [key, value] : weights.metadata) metadata << key << '\t' << value << '\n';
  return 0;
}

int read_each(const std::vector<std::string>& files) {
  for (const auto& file : files) {
    std::string outcome = "read";
    try {
      hookforge::read_weights(file);
    } catch (const std::exception& e) {
      outcome = std::string("error: ") + e.what();
    }
    for (auto at = outcome.find('\n'); at != std::string::npos; at = outcome.find('\n', at))
      outcome.replace(at, 1, "\\n");
    std::cout << outcome << '\n';
  }
  return 0;
}

/// The tensors of INDIR/manifest.txt, built as its LAYOUT column says.
hookforge::named_tensors manifest_tensors(const fs::path& dir) {
  hookforge::named_tensors tensors;
  std::map<std::string, torch::Tensor> first_of_group;
  std::ifstream in(dir / "manifest.txt");
  if (!in) throw usage_error("cannot open " + (dir / "manifest.txt").string());
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split(line, '\t');
    if (f.size() < 5)
      throw usage_error("a manifest line of " + std::to_string(f.size()) + " fields: " + line);
    const std::string& name = f[0];
    const std::string& group = f[4];
    const std::string layout = f.size() > 5 ? f[5] : "-";
    const auto dtype = dtype_of(f[1]);
    const auto shape = shape_of(f[2]);
    const auto values = read_tensor(dir / f[3], dtype, shape);  // an absolute f[3] stays itself
    const auto first = first_of_group.find(group);
    torch::Tensor t;
    if (layout == "-") {
      const bool tie = first != first_of_group.end() && first->second.scalar_type() == dtype &&
                       first->second.sizes() == values.sizes();
      t = tie ? first->second : values;
    } else if (layout == "t") {
      if (values.dim() < 2) throw usage_error(name + ": layout t needs two dimensions");
      t = values.transpose(-1, -2).contiguous().transpose(-1, -2);
    } else if (layout.starts_with("view:")) {
      if (first == first_of_group.end())
        throw usage_error(name + ": no tensor of its group before");
      const auto from = std::stoll(layout.substr(5));
      t = first->second.reshape(-1).slice(0, from, from + values.numel()).view(shape);
      if (t.scalar_type() != dtype || bytes_of(t) != bytes_of(values))
        throw usage_error(name + ": its bytes differ from those of its group's storage at " +
                          std::to_string(from));
    } else if (layout.starts_with("pad:")) {
      const auto pad = std::stoll(layout.substr(4));
      auto storage = torch::zeros({pad + values.numel()}, values.options());
      t = storage.slice(0, pad).view(shape);
      t.copy_(values);
    } else {
      throw usage_error(name + ": no layout " + layout);
    }
    if (first == first_of_group.end()) first_of_group.emplace(group, t);
    tensors.emplace_back(name, t);
  }
  return tensors;
}

hookforge::weights_format format_of(const std::string& name) {
  const auto format = hookforge::parse_weights_format(name);
  if (!format) throw usage_error("no weights format " + name);
  return *format;
}

int write(const std::vector<std::string>& a) {
  if (a.size() != 3) throw usage_error("write FORMAT OUTFILE INDIR");
  const fs::path in = a[2];
  std::map<std::string, std::string> metadata;
  if (fs::exists(in / "metadata.txt")) metadata = read_metadata(in / "metadata.txt");
  hookforge::write_weights(a[1], manifest_tensors(in), format_of(a[0]), metadata);
  return 0;
}

int espcn(const std::vector<std::string>& a) {
  if (a.size() != 8 && (a.size() != 9 || a[8] != "residual"))
    throw usage_error("espcn WEIGHTS SCALE IN OUT N C H W [residual]");
  std::vector<std::int64_t> shape;
  for (std::size_t i = 4; i < 8; ++i) shape.push_back(std::stoll(a[i]));
  hookforge::ESPCN model(hookforge::espcn_options{
      .scale = std::stoll(a[1]), .channels = shape[1], .residual = a.size() == 9});
  hookforge::load_pretrained(*model, {.file = a[0]});
  model->eval();
  torch::NoGradGuard no_grad;
  const auto input = read_tensor(a[2], torch::kFloat, shape);
  const auto output = model->forward(input).contiguous();
  write_bytes(a[3], output.data_ptr(), output.nbytes());
  return 0;
}

int save_espcn(const std::vector<std::string>& a) {
  if (a.size() != 4) throw usage_error("save-espcn FORMAT OUTFILE SCALE SEED");
  torch::manual_seed(std::stoull(a[3]));
  hookforge::ESPCN model(hookforge::espcn_options{.scale = std::stoll(a[2])});
  hookforge::save_weights(*model, a[1], format_of(a[0]));
  return 0;
}

int dtypes(const std::vector<std::string>& a) {
  if (!a.empty()) throw usage_error("dtypes");
  for (const auto& [name, type] : dtype_names()) std::cout << name << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: probe read|read-each|write|espcn|save-espcn|dtypes ARG...\n";
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "read") return read(args);
    if (command == "read-each") return read_each(args);
    if (command == "write") return write(args);
    if (command == "espcn") return espcn(args);
    if (command == "save-espcn") return save_espcn(args);
    if (command == "dtypes") return dtypes(args);
  } catch (const usage_error& e) {
    std::cerr << "probe " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  }
  std::cerr << "probe: unknown command " << command << "\n";
  return 2;
}
