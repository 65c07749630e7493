// hookforge/hooks/detail/sha256.hpp — the SHA-256 of bytes or of a file, as lower-case hex.
//
// OpenSSL's libcrypto computes it (Debian: libssl-dev; CMake: OpenSSL::Crypto, which the
// hookforge::hooks target links, hence this header's place in the hooks layer). Published
// checkpoints are named after it (CheckpointSaver's published_keys), as MMEngine's are, so
// `sha256sum` checks them.
#pragma once

#include <array>
#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <openssl/evp.h>

#include "hookforge/torch/io/file_descriptor.hpp"

namespace hookforge {

namespace detail {

/// An EVP digest context computing SHA-256.
class sha256_context {
 public:
  sha256_context() : ctx_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("hookforge: sha256: OpenSSL could not start a SHA-256 digest");
  }
  void update(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx_.get(), data, size) != 1)
      throw std::runtime_error("hookforge: sha256: OpenSSL's digest update failed");
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest.data(), &size) != 1)
      throw std::runtime_error("hookforge: sha256: OpenSSL's digest could not finish");
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
      out += digits[digest[i] >> 4];
      out += digits[digest[i] & 0xF];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

}  // namespace detail

/// SHA-256 of `bytes`, 64 lower-case hex digits.
inline std::string sha256_hex(std::string_view bytes) {
  detail::sha256_context ctx;
  ctx.update(bytes.data(), bytes.size());
  return ctx.hex();
}

/// SHA-256 of the file at `path`, read in chunks. Throws std::filesystem::filesystem_error
/// naming the path when it cannot be read.
inline std::string sha256_file(const std::filesystem::path& path) {
  auto file = detail::unique_fd::open(path, O_RDONLY);
  if (!file)
    throw std::filesystem::filesystem_error("hookforge: sha256: cannot open the file", path,
                                            std::error_code(errno, std::generic_category()));
  detail::sha256_context ctx;
  std::array<unsigned char, 1 << 16> chunk{};
  for (std::uint64_t offset = 0;;) {
    const std::size_t n = file.read_at(chunk.data(), chunk.size(), offset);
    if (n == 0) break;
    ctx.update(chunk.data(), n);
    offset += n;
  }
  return ctx.hex();
}

}  // namespace hookforge
