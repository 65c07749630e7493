// hookforge/hooks/detail/mlflow_sender.hpp — MLflowLogger's background thread: it sets the
// run up, sends the queued metrics in runs/log-batch requests over one connection, and at
// the end uploads the artifacts and sets the run's status. The training thread only queues.
//
//   mlflow::sender out(options);
//   auto problem = out.start(/*resume_run_id=*/"", tags, params, now_ms);  // "" when set up
//   out.log({"train/loss", 0.1, now_ms, 64});                                // never blocks
//   auto report = out.finish("FINISHED", artifacts, /*timeout_seconds=*/60);
//
// The queue holds at most `capacity` metrics: a server that is down or slow fills it, and
// what does not fit is dropped and counted (dropped()), never waited for. Requests that get
// no answer (or the server's own error, 5xx) are tried again, the same batch, after 0.5 s,
// then twice as long each time up to `retry_max_seconds`; a request the server refuses
// (4xx: a name it rejects) is dropped and counted. What happened is kept as notes
// (take_notes()) for the training thread to say: the worker does not print.
//
// A resumed run (its id given to start) continues: its status goes back to RUNNING, and a
// metric at a step the run already logged for that key is not sent again (the steps a
// crashed run logged past its checkpoint, which the resumed run repeats).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hookforge/hooks/detail/mlflow_rest.hpp"

namespace hookforge::detail::mlflow {

struct sender_options {
  std::string tracking_uri;
  http::session_options http = {};
  std::string experiment = "Default";
  std::string run_name = {};
  std::string user = {};           ///< the run's user_id
  std::size_t capacity = 100'000;  ///< metrics waiting at most; more are dropped
  double retry_max_seconds = 5;    ///< the longest wait between two tries
  double start_wait_seconds = 10;  ///< start() waits this long for the first try's outcome
};

/// An artifact to upload at the end: its name in the run, and the file (or, without one,
/// the text) to upload.
struct artifact {
  std::string name;
  std::filesystem::path file = {};
  std::string text = {};
};

struct finish_report {
  std::int64_t sent = 0;              ///< metrics the server took
  std::int64_t dropped = 0;           ///< metrics the full queue turned away
  std::int64_t refused = 0;           ///< metrics the server refused (4xx)
  std::int64_t unsent = 0;            ///< metrics still queued when finish() gave up waiting
  bool status_set = false;            ///< the final status reached the server
  std::vector<std::string> uploaded;  ///< artifacts uploaded
};

class sender {
 public:
  explicit sender(sender_options options)
      : options_(std::move(options)), server_(options_.tracking_uri, options_.http) {}
  ~sender() { stop(); }
  sender(const sender&) = delete;
  sender& operator=(const sender&) = delete;

  /// Starts the thread, which creates the run (or takes `resume_run_id` up again) and logs
  /// `tags` and `params` first. Waits for its first try: "" when the run is set up, else
  /// why not (the thread keeps trying; metrics queue meanwhile).
  std::string start(std::string resume_run_id, std::vector<key_value> tags,
                    std::vector<key_value> params, std::int64_t start_ms) {
    std::unique_lock lock(mutex_);
    run_.run_id = std::move(resume_run_id);
    tags_ = std::move(tags);
    params_ = std::move(params);
    start_ms_ = start_ms;
    thread_ = std::thread([this] { work(); });
    changed_.wait_for(lock, seconds(options_.start_wait_seconds), [&] { return tried_setup_; });
    if (!tried_setup_) return "no answer yet";
    return set_up_ ? std::string() : setup_error_;
  }

  /// Queue a metric; dropped (and counted) when the queue is full.
  void log(metric m) {
    {
      std::lock_guard lock(mutex_);
      if (finished_) return;  // the run could not be set up (said) or has ended
      if (queue_.size() >= options_.capacity) {
        if (dropped_++ == 0)
          notes_.push_back(fmt::format(
              "the queue for {} is full ({} metrics: {}); metrics are dropped until it drains, "
              "and counted",
              server_.uri(), options_.capacity,
              last_error_.empty() ? "the server is slow" : last_error_));
        return;
      }
      queue_.push_back(std::move(m));
    }
    changed_.notify_all();
  }

  /// Waits up to `timeout_seconds` until everything queued so far has been sent; not at all
  /// while the server is not answering. Whether it was.
  bool flush(double timeout_seconds) {
    std::unique_lock lock(mutex_);
    auto done = [&] {
      return finished_ || !last_error_.empty() ||
             (set_up_ && queue_.empty() && tags_.empty() && params_.empty() && !sending_);
    };
    changed_.wait_for(lock, seconds(timeout_seconds), done);
    return set_up_ && queue_.empty() && !sending_;
  }

  /// Sends what is queued, uploads `artifacts` and sets the run's `status` (with `error`, a
  /// failed run's, as the tag hookforge.error), waiting at most `timeout_seconds`; then stops
  /// the thread.
  finish_report finish(std::string status, std::vector<artifact> artifacts, double timeout_seconds,
                       const std::string& error = {}) {
    std::unique_lock lock(mutex_);
    if (!thread_.joinable()) return report();
    if (!error.empty())
      tags_.push_back({"hookforge.error", error.substr(0, batch_limits::tag_value_length)});
    final_status_ = std::move(status);
    artifacts_ = std::move(artifacts);
    finishing_ = true;
    changed_.notify_one();
    changed_.wait_for(lock, seconds(timeout_seconds), [&] { return finished_; });
    lock.unlock();
    stop();
    lock.lock();
    return report();
  }

  /// The server refused to set the run up: nothing will be sent.
  bool gave_up() const {
    std::lock_guard lock(mutex_);
    return finished_ && !set_up_;
  }

  /// The run's id once set up (empty before).
  std::string run_id() const {
    std::lock_guard lock(mutex_);
    return set_up_ ? run_.run_id : std::string();
  }
  const std::string& uri() const { return server_.uri(); }

  /// What the thread noticed since the last call (the server going away and coming back,
  /// refusals, the queue full), for the training thread to say.
  std::vector<std::string> take_notes() {
    std::lock_guard lock(mutex_);
    return std::exchange(notes_, {});
  }

 private:
  static std::chrono::duration<double> seconds(double s) {
    return std::chrono::duration<double>(s);
  }

  finish_report report() const {
    return {sent_,       dropped_, refused_, static_cast<std::int64_t>(queue_.size()),
            status_set_, uploaded_};
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  /// The thread: set up, then send until finished or stopped.
  void work() {
    std::unique_lock lock(mutex_);
    double backoff = 0.5;
    while (!stopping_) {
      const bool ok = step(lock);
      if (finished_) return;
      if (ok) {
        backoff = 0.5;
        changed_.wait(lock, [&] { return stopping_ || has_work(); });
      } else {  // wait before trying again; only stop() cuts it short
        changed_.wait_for(lock, seconds(backoff), [&] { return stopping_; });
        backoff = std::min(backoff * 2, options_.retry_max_seconds);
      }
    }
  }

  bool has_work() const { return !set_up_ || !params_.empty() || !queue_.empty() || finishing_; }

  /// One piece of work, the lock released while a request is out. False: the server did
  /// not answer (or failed itself): the same work is tried again after a wait.
  bool step(std::unique_lock<std::mutex>& lock) {
    try {
      if (!set_up_)
        set_up(lock);
      else if (!tags_.empty() || !params_.empty())
        send_params(lock);
      else if (!queue_.empty())
        send_metrics(lock);
      else if (finishing_)
        end_run(lock);
      if (!last_error_.empty()) {
        notes_.push_back(fmt::format("{} answers again", server_.uri()));
        last_error_.clear();
      }
      return true;
    } catch (const request_failed& e) {
      if (!lock.owns_lock()) lock.lock();
      failed_to_set_up(e.what());
      if (e.retryable()) {
        if (last_error_.empty())
          notes_.push_back(
              fmt::format("{}; trying again until it answers (metrics wait in the "
                          "queue, up to {})",
                          e.what(), options_.capacity));
        last_error_ = e.what();
        return false;
      }
      refuse(e);
      return true;
    } catch (const std::exception& e) {  // an answer that is not what MLflow answers
      if (!lock.owns_lock()) lock.lock();
      request_failed unexpected(
          fmt::format("{} answered unexpectedly: {}", server_.uri(), e.what()), true);
      failed_to_set_up(unexpected.what());
      refuse(unexpected);
      return true;
    }
  }

  /// A try of step() failed: before the run is set up, start() says why.
  void failed_to_set_up(const std::string& why) {
    if (set_up_) return;
    setup_error_ = why;
    tried_setup_ = true;
    changed_.notify_all();
  }

  void set_up(std::unique_lock<std::mutex>& lock) {
    const std::string resume = run_.run_id;
    lock.unlock();
    run_info run;
    if (resume.empty()) {
      run = server_.create_run(server_.experiment_id(options_.experiment), options_.run_name,
                               options_.user, {}, start_ms_);
    } else {
      run = server_.get_run(resume);
      server_.update_run(resume, "RUNNING", 0);
    }
    lock.lock();
    run_ = std::move(run);
    set_up_ = tried_setup_ = true;
    changed_.notify_all();
  }

  /// Tags, then params, at most a batch's worth per request.
  void send_params(std::unique_lock<std::mutex>& lock) {
    const bool tags = !tags_.empty();
    auto& source = tags ? tags_ : params_;
    const std::size_t n = std::min(source.size(), batch_limits::params);
    std::vector<key_value> part(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string id = run_.run_id;
    lock.unlock();
    server_.log_batch(id, {}, tags ? std::vector<key_value>{} : part,
                      tags ? part : std::vector<key_value>{});
    lock.lock();
    source.erase(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(n));
  }

  /// Up to a batch of the queue's oldest metrics; taken off the queue once sent. Steps a
  /// resumed run already has are skipped.
  void send_metrics(std::unique_lock<std::mutex>& lock) {
    std::vector<metric> part;
    std::size_t taken = 0;
    for (; taken < queue_.size() && part.size() < batch_limits::metrics; ++taken) {
      const auto& m = queue_[taken];
      if (auto it = run_.last_steps.find(m.key);
          it != run_.last_steps.end() && m.step <= it->second)
        continue;
      part.push_back(m);
    }
    const std::string id = run_.run_id;
    if (!part.empty()) {
      sending_ = true;
      lock.unlock();
      try {
        server_.log_batch(id, part, {}, {});
      } catch (...) {
        lock.lock();
        sending_ = false;
        throw;
      }
      lock.lock();
      sending_ = false;
    }
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(taken));
    sent_ += static_cast<std::int64_t>(part.size());
    changed_.notify_all();  // a flush() may wait for this
  }

  /// The artifacts (when the server stores them), then the status.
  void end_run(std::unique_lock<std::mutex>& lock) {
    if (!artifacts_.empty() && !rest_client::serves_artifacts(run_)) {
      notes_.push_back(fmt::format(
          "the run's artifacts go to '{}', which {} does not serve: not uploaded (start the "
          "server with --serve-artifacts)",
          run_.artifact_uri, server_.uri()));
      artifacts_.clear();
    }
    if (!artifacts_.empty()) {
      const auto next = artifacts_.front();
      const run_info run = run_;
      lock.unlock();
      if (next.file.empty())
        server_.upload_text(run, next.name, next.text);
      else
        server_.upload_file(run, next.name, next.file);
      lock.lock();
      uploaded_.push_back(next.name);
      artifacts_.erase(artifacts_.begin());
      return;
    }
    const std::string id = run_.run_id, status = final_status_;
    lock.unlock();
    server_.update_run(id, status, now_ms());
    lock.lock();
    status_set_ = finished_ = true;
    changed_.notify_all();
  }

  /// The server refused a request: what it was about is dropped, and said.
  void refuse(const request_failed& e) {
    if (!set_up_) {  // no run to log to: nothing will be sent
      notes_.push_back(fmt::format("{}: nothing will be logged", e.what()));
      finished_ = true;
      changed_.notify_all();
      return;
    }
    notes_.push_back(std::string(e.what()) + " (dropped)");
    if (!tags_.empty() || !params_.empty()) {
      auto& source = tags_.empty() ? params_ : tags_;
      source.erase(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                        source.size(), batch_limits::params)));
    } else if (!queue_.empty()) {
      const auto n = std::min(queue_.size(), batch_limits::metrics);
      refused_ += static_cast<std::int64_t>(n);
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    } else if (!artifacts_.empty()) {
      artifacts_.erase(artifacts_.begin());
    } else {
      finished_ = true;
      changed_.notify_all();
    }
  }

  static std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  sender_options options_;
  rest_client server_;  // used by the thread only, once started
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
  // Guarded by mutex_:
  run_info run_;
  std::vector<key_value> tags_, params_;
  std::int64_t start_ms_ = 0;
  std::deque<metric> queue_;
  std::vector<artifact> artifacts_;
  std::string final_status_;
  std::string last_error_;   // the last request that got no answer; empty once one did
  std::string setup_error_;  // why the run is not set up yet
  std::vector<std::string> notes_;
  std::vector<std::string> uploaded_;
  std::int64_t sent_ = 0, dropped_ = 0, refused_ = 0;
  bool set_up_ = false, tried_setup_ = false, finishing_ = false, finished_ = false,
       stopping_ = false, status_set_ = false, sending_ = false;
};

}  // namespace hookforge::detail::mlflow
