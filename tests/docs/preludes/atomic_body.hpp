// Prelude of docs/checkpoints.md's atomic_file block (tests/docs/snippets.py): what it writes.
#pragma once
#include "tests/docs/preludes/torch.hpp"

#include <filesystem>
#include <fstream>
#include <string>

inline void example(const std::filesystem::path& path, const char* data, std::size_t size,
                    const char* header, std::size_t header_size, const std::string& contents,
                    const std::string& json) {
  // snippet
}
