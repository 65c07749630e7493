// src/run/signal_stop.hpp — SIGINT and SIGTERM stop a run cleanly: the first one asks the
// Trainer to stop (a std::stop_token in its options) after the current batch when a
// CheckpointSaver saves it there, else after the current epoch, where its hooks run as
// after any last epoch (the last checkpoint, complete logs); hookforge-run then exits
// 128 + the signal's number, and a second one ends the process at once. A Slurm job's
// requeue signal (USR1 by default: `#SBATCH --signal=USR1@90`) stops the same way, and
// more of it are ignored: Slurm sends it to every task of a step, and a script may send it
// twice. Private to hookforge::run; no LibTorch.
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
  /// `requeue` (a signal number, 0 for none) requests the stop too, and is ignored after.
  void arm(const char* what, int requeue = 0);
  /// The signal that requested the stop, 0 if none did.
  int received() const;

 private:
  std::stop_source source_;
  std::jthread watcher_;  ///< turns the handler's byte on a pipe into request_stop()
  int pipe_[2] = {-1, -1};
};

/// "SIGINT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGHUP", or "a signal".
const char* signal_name(int signal);

}  // namespace hookforge::run::detail
