// src/run/signal_stop.hpp — SIGINT and SIGTERM stop a run cleanly: the first one asks the
// Trainer to stop after the current epoch (a std::stop_token in its options), where its
// hooks run as after any last epoch (CheckpointSaver writes its last checkpoint, the logs
// are complete, gnuplot has ended), and hookforge-run then exits 128 + the signal's number;
// a second one ends the process at once. Mid-epoch checkpoints do not exist yet, so the
// current epoch is finished rather than the current step: a stop from which --resume
// continues exactly. Private to hookforge::run; no LibTorch.
#pragma once

#include <stop_token>
#include <thread>

namespace hookforge::run::detail {

class signal_stop {
 public:
  signal_stop();  ///< the stop source; no handler yet
  ~signal_stop();
  signal_stop(const signal_stop&) = delete;
  signal_stop& operator=(const signal_stop&) = delete;

  /// What the Trainer polls (run::settings().stop_token).
  std::stop_token token() const { return source_.get_token(); }
  /// From now on until destruction, SIGINT and SIGTERM are caught: the first requests the
  /// stop and prints one line (`what` says what happens next), the second exits at once.
  void arm(const char* what);
  /// The signal that requested the stop, 0 if none did.
  int received() const;

 private:
  std::stop_source source_;
  std::jthread watcher_;  ///< turns the handler's byte on a pipe into request_stop()
  int pipe_[2] = {-1, -1};
};

/// "SIGINT", "SIGTERM", or the number.
const char* signal_name(int signal);

}  // namespace hookforge::run::detail
