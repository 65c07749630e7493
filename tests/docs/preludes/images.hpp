// Prelude of docs/data.md's dataset block (tests/docs/snippets.py): the readers it calls.
#pragma once
#include "tests/docs/preludes/torch.hpp"

#include <filesystem>

torch::Tensor load_image(const std::filesystem::path& file);
torch::Tensor label_of(const std::filesystem::path& file);
