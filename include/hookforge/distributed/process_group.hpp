// hookforge/distributed/process_group.hpp — this process's place in a distributed run, and the
// collectives the distributed hooks use, on LibTorch's c10d.
//
//   auto pg = hookforge::distributed::init_from_env();     // distributed/init.hpp; rank 0 of 1
//   without env pg.rank(), pg.world_size(), pg.is_rank_zero() pg.allreduce(t) // in place, sum over
//   the ranks pg.broadcast(t, 0)                              // rank 0's values everywhere
//
// A default-constructed process_group is a single process (rank 0 of 1): every collective
// returns at once and leaves its tensor as it is, so the distributed hooks cost nothing in
// a run that is not distributed. A distributed one holds a c10d backend (Gloo on CPU, NCCL
// on CUDA builds) and the store its ranks met through; copies share them.
//
// Collectives take tensors anywhere: one that is not contiguous on the backend's device (a
// CPU score under NCCL) is copied there and back. Every collective blocks until it
// completes (Work::wait), but for start_allreduce, which finish() completes later (a flag
// agreed on while the next batch computes). c10d requires every rank to
// call the same collectives in the same order; one that fails (a peer died, or waited
// longer than the timeout) throws hookforge::distributed::error naming the operation, this rank
// and the backend's message.
//
// LibTorch versions: up to 1.13 a c10d backend (ProcessGroupGloo, ProcessGroupNCCL) is a
// c10d::ProcessGroup; from 2.0 on it is a c10d::Backend, and c10d::ProcessGroup became a
// dispatcher over backends (pytorch/pytorch#88330). The collectives used here
// (allreduce, broadcast, allgather, barrier on std::vector<at::Tensor>, returning
// c10::intrusive_ptr<c10d::Work>) have the same signatures on both; `backend_type` names
// the base class of the version compiled against.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>

#include "hookforge/torch/compat.hpp"

#include <c10/util/Exception.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include HOOKFORGE_C10D_BACKEND_HEADER

namespace hookforge::distributed {

/// The base class of a c10d backend in this LibTorch (hookforge/torch/compat.hpp).
using backend_type = HOOKFORGE_C10D_BACKEND;

/// What hookforge::distributed throws: a rank that did not join, a collective that failed.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How allreduce combines the ranks' values.
enum class reduce_op { sum, max, min };

namespace detail {

/// An exception's message without LibTorch's C++ backtrace.
inline std::string message_of(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    return c10_error->what_without_backtrace();
  return e.what();
}

inline c10d::ReduceOp to_c10d(reduce_op op) {
  switch (op) {
    case reduce_op::max:
      return c10d::ReduceOp::MAX;
    case reduce_op::min:
      return c10d::ReduceOp::MIN;
    case reduce_op::sum:
      break;
  }
  return c10d::ReduceOp::SUM;
}

}  // namespace detail

class process_group {
 public:
  /// A single process: rank 0 of 1. Collectives do nothing.
  process_group() = default;

  /// A distributed group over `backend`, whose ranks met through `store` (kept alive with it).
  /// `device` is where the backend's collectives run: the CPU for Gloo, this rank's GPU for
  /// NCCL; a tensor elsewhere (a CPU score under NCCL) is copied there and back.
  /// `addresses`: each rank's machine, by rank, for messages that name a peer (init's).
  process_group(c10::intrusive_ptr<backend_type> backend, c10::intrusive_ptr<c10d::Store> store,
                std::chrono::milliseconds timeout, torch::Device device = torch::kCPU,
                std::vector<std::string> addresses = {})
      : backend_(std::move(backend)),
        store_(std::move(store)),
        timeout_(timeout),
        device_(device),
        addresses_(std::move(addresses)) {
    if (!backend_)
      throw std::invalid_argument("hookforge::distributed::process_group: the backend is null");
    rank_ = backend_->getRank();
    world_ = backend_->getSize();
  }

  int rank() const noexcept { return rank_; }
  int world_size() const noexcept { return world_; }
  bool is_rank_zero() const noexcept { return rank_ == 0; }
  /// More than one rank: collectives communicate.
  bool distributed() const noexcept { return world_ > 1; }
  /// "gloo", "nccl", or "none" for a single process.
  std::string backend_name() const {
    return backend_ ? backend_->getBackendName() : std::string("none");
  }
  /// How long a collective waits for the other ranks.
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  /// Where the collectives run (see the constructor).
  torch::Device device() const noexcept { return device_; }

  /// Combine `tensor` (dense) over the ranks, in place: every rank gets the result.
  void allreduce(torch::Tensor& tensor, reduce_op op = reduce_op::sum) const {
    if (!distributed()) return;
    std::vector<at::Tensor> tensors{staged(tensor)};
    c10d::AllreduceOptions options;
    options.reduceOp = detail::to_c10d(op);
    run("allreduce", [&] { return backend_->allreduce(tensors, options); });
    unstage(tensors[0], tensor);
  }

  /// allreduce, started: `tensor` (dense, contiguous, on device()) holds the result once
  /// finish() has returned for the work this gives. Every rank starts the same collectives in
  /// the same order; a work started is finished (or dropped) on every rank alike.
  c10::intrusive_ptr<c10d::Work> start_allreduce(torch::Tensor& tensor,
                                                 reduce_op op = reduce_op::sum) const {
    if (!distributed()) return {};
    if (!tensor.is_contiguous() || tensor.device() != device_)
      throw std::invalid_argument(fmt::format(
          "hookforge::distributed: start_allreduce needs a contiguous tensor on {}, got one on {}",
          device_.str(), tensor.device().str()));
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = detail::to_c10d(op);
    c10::intrusive_ptr<c10d::Work> work;
    run("allreduce", [&] { return work = backend_->allreduce(tensors, options); }, false);
    return work;
  }
  /// Wait for `work` that start_allreduce gave (none: nothing to wait for).
  void finish(const c10::intrusive_ptr<c10d::Work>& work) const {
    if (work) run("allreduce", [&] { return work; });
  }

  /// Rank `root`'s `tensor` (dense), in place on every rank.
  void broadcast(torch::Tensor& tensor, int root = 0) const {
    if (!distributed()) return;
    std::vector<at::Tensor> tensors{staged(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    options.rootTensor = 0;
    run("broadcast", [&] { return backend_->broadcast(tensors, options); });
    unstage(tensors[0], tensor);
  }

  /// Every rank's `tensor` (same shape and type on every rank), by rank, on tensor's device.
  std::vector<torch::Tensor> allgather(const torch::Tensor& tensor) const {
    if (!distributed()) return {tensor.clone()};
    std::vector<at::Tensor> inputs{tensor.to(device_).contiguous()};
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < world_; ++r) outputs[0].push_back(torch::empty_like(inputs[0]));
    run("allgather", [&] { return backend_->allgather(outputs, inputs); });
    for (auto& t : outputs[0]) t = t.to(tensor.device());
    return outputs[0];
  }

  /// Wait until every rank got here.
  void barrier() const {
    if (!distributed()) return;
    run("barrier", [&] { return backend_->barrier(); });
  }

  /// The c10d backend (null for a single process) and the store, for collectives of your own.
  const c10::intrusive_ptr<backend_type>& backend() const noexcept { return backend_; }
  const c10::intrusive_ptr<c10d::Store>& store() const noexcept { return store_; }

 private:
  /// The other ranks, with their machines where known: "rank 1 at 10.0.0.6", "ranks 0 at
  /// 10.0.0.5, 2 at 10.0.0.7".
  std::string peers() const {
    std::vector<std::string> named;
    for (int r = 0; r < world_; ++r) {
      if (r == rank_) continue;
      if (named.size() == 8) {
        named.push_back(fmt::format("{} more", world_ - 1 - 8));
        break;
      }
      named.push_back(r < static_cast<int>(addresses_.size())
                          ? fmt::format("{} at {}", r, addresses_[static_cast<std::size_t>(r)])
                          : std::to_string(r));
    }
    return fmt::format("{} {}", world_ == 2 ? "rank" : "ranks", fmt::join(named, ", "));
  }

  template <class Start>
  void run(const char* what, Start&& start, bool wait = true) const {
    try {
      auto work = start();
      if (wait) work->wait();
    } catch (const std::exception& e) {
      throw error(fmt::format(
          "hookforge::distributed: {} failed on rank {} of {} ({}) with {}: {} — every rank "
          "must run the same collectives in "
          "the same order; a rank that stopped or took another path leaves the others "
          "waiting up to the "
          "timeout ({} s)",
          what, rank_, world_, backend_name(), peers(), detail::message_of(e),
          std::chrono::duration<double>(timeout_).count()));
    }
  }

  /// `tensor` itself when the backend can work on it in place, else a contiguous copy on device_.
  torch::Tensor staged(const torch::Tensor& tensor) const {
    if (tensor.device() == device_ && tensor.is_contiguous()) return tensor;
    return tensor.to(device_, /*non_blocking=*/false, /*copy=*/true).contiguous();
  }
  static void unstage(const torch::Tensor& result, torch::Tensor& tensor) {
    if (!result.is_same(tensor)) tensor.copy_(result);
  }

  c10::intrusive_ptr<backend_type> backend_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_{0};
  torch::Device device_ = torch::kCPU;
  std::vector<std::string> addresses_;  ///< each rank's machine (messages)
  int rank_ = 0;
  int world_ = 1;
};

}  // namespace hookforge::distributed
