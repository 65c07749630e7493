// libFuzzer target for the weights readers (hookforge/torch/weights/): each input is a file
// that read_weights reads. An input whose first byte is even becomes the data.pkl of a
// torch.save-shaped zip with one 64-byte storage record, data/0 (the restricted unpickler,
// the entry chosen, the tensors rebuilt); an odd one is the whole file, the rest of the
// bytes (safetensors' header checks, the content sniffing). Refusals are exceptions; a
// crash, a leak, a sanitizer report, a hang or a large allocation is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>

#include "hookforge/torch/weights/weights_file.hpp"

namespace {

const std::filesystem::path& scratch() {
  static const auto path = std::filesystem::temp_directory_path() /
                           ("hookforge_weights_fuzz_" + std::to_string(::getpid()));
  return path;
}

void write_input(const std::uint8_t* data, std::size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  if (data[0] % 2 == 0) {
    caffe2::serialize::PyTorchStreamWriter writer(scratch().string());
    writer.writeRecord("data.pkl", bytes, size - 1);
    writer.writeRecord("byteorder", "little", 6);
    const std::vector<char> storage(64, 1);
    writer.writeRecord("data/0", storage.data(), storage.size());
    writer.writeEndOfFile();
  } else {
    std::ofstream(scratch(), std::ios::binary).write(bytes, static_cast<std::streamsize>(size - 1));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  write_input(data, size);
  try {
    const auto weights = hookforge::read_weights(scratch());
    for (const auto& [name, tensor] : weights.tensors) (void)tensor.sum();  // touch every byte
  } catch (const hookforge::checkpoint_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
