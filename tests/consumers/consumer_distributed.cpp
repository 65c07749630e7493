// A tiny program that uses hookforge's distributed layer as a dependency would: a world of one
// (no environment), and a shard of a sampler.
#include <hookforge/distributed.hpp>

#include <cstdio>

int main() {
  auto group = hookforge::distributed::init_from_env();
  hookforge::sharded_sampler shard(hookforge::sequential_sampler(10), 1, 4);
  std::printf("distributed consumer: rank %d of %d, shard of %zu\n", group.rank(),
              group.world_size(), shard.size());
  return 0;
}
