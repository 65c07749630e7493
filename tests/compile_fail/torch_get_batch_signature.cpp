// A dataset whose get_batch takes a vector: the loader could not call it, and would stack
// the samples one by one in silence; one hookforge message, with this file's line.
#include <cstddef>
#include <span>
#include <vector>

#include <hookforge/torch.hpp>

struct Rows {
  torch::Tensor x = torch::zeros({6, 2});
  std::size_t size() const { return 6; }
  hookforge::Entry get(std::size_t i) const { return {{"input", x[static_cast<long>(i)]}}; }
#ifdef HOOKFORGE_SHOULD_FAIL
  hookforge::Entry get_batch(const std::vector<std::size_t>& indices) const {
#else
  hookforge::Entry get_batch(std::span<const std::size_t> indices) const {
#endif
    return {{"input", x.index_select(0, torch::tensor(std::vector<long>(indices.begin(), indices.end())))}};
  }
};

int main() { hookforge::DataLoader loader(Rows{}, {.batch_size = 2}); }
