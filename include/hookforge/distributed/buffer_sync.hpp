// hookforge/distributed/buffer_sync.hpp — what a data-parallel run does with the model's buffers
// (BatchNorm's running statistics) each epoch: GradientAllReduce's `buffers` option, and
// hookforge-run's `distributed.buffers`. Apart from gradient_allreduce.hpp, so that a
// config reader can name the choices without c10d.
#pragma once

namespace hookforge::distributed {

enum class buffer_sync {
  off,        ///< nothing (they were broadcast at the start)
  broadcast,  ///< rank 0's buffers everywhere (PyTorch DDP's broadcast_buffers, once per epoch)
  average,    ///< floating buffers averaged over the ranks; the others (counters) from rank 0
};

}  // namespace hookforge::distributed
