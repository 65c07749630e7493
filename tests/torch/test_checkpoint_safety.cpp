// Checkpoint files that never lose data: disk full, flipped bytes, stale temp files,
// version 1 files, errors naming file/section/key (hookforge/torch/io/checkpoint.hpp,
// atomic_file.hpp, checkpoint_format.hpp, crc32.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// torch before catch: with glog, torch defines a CHECK macro that Catch's must replace.
#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/checkpoint_format.hpp"
#include "hookforge/torch/io/crc32.hpp"

#include "file_testing.hpp"

namespace fs = std::filesystem;
using hookforge::checkpoint_error;
using hookforge::checkpoint_reader;
using hookforge::checkpoint_writer;

namespace {

using tfx::error_of;

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// A pid that belonged to a process that has exited (and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// A child process that waits until it is killed (at the end of the scope).
struct live_process {
  pid_t pid = ::fork();
  live_process() {
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~live_process() {
    if (pid <= 0) return;  // fork failed: kill(-1) would address every process
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

struct child_result {
  bool exited = false;  // false: killed by a signal (std::terminate's abort, say)
  int code = -1;
  std::string output;
};

// Runs `body(fd)` in a forked child that exits with its return value; what it writes to
// `fd` comes back as `output`.
template <class F>
child_result run_in_child(F&& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::_exit(body(fds[1]));
  }
  ::close(fds[1]);
  child_result result;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      result.output.append(buf, static_cast<std::size_t>(n));
    else if (errno != EINTR)
      break;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exited = WIFEXITED(status);
  result.code = result.exited ? WEXITSTATUS(status) : -1;
  if (WIFSIGNALED(status))
    result.output += " [killed by signal " + std::to_string(WTERMSIG(status)) + "]";
  return result;
}

}  // namespace

TEST_CASE("crc32: standard check values, streaming", "[checkpoint]") {
  using hookforge::detail::crc32;
  CHECK(crc32(0, "", 0) == 0u);
  CHECK(crc32(0, "123456789", 9) == 0xCBF43926u);
  CHECK(crc32(0, "The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u);

  // Slicing-by-8 against the bitwise definition, at every length and split point mod 8.
  std::vector<unsigned char> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 131 + 7);
  const auto bitwise = [](const unsigned char* p, std::size_t n) {
    std::uint32_t c = 0xFFFFFFFFu;
    while (n--) {
      c ^= *p++;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
  };
  for (std::size_t n : {1u, 7u, 8u, 9u, 63u, 64u, 999u, 1000u}) {
    INFO("length " << n);
    CHECK(crc32(0, data.data(), n) == bitwise(data.data(), n));
    for (std::size_t split = 0; split <= std::min<std::size_t>(n, 9); ++split)
      CHECK(crc32(crc32(0, data.data(), split), data.data() + split, n - split) ==
            bitwise(data.data(), n));
  }
}

TEST_CASE("checkpoint: the file starts with the checksummed header", "[checkpoint]") {
  namespace layout = hookforge::detail::ckpt;
  tfx::temp_dir dir;
  const auto file = dir.path / "h.ckpt";
  checkpoint_writer{}.add_int("step", 3).save(file);
  const auto bytes = tfx::read_bytes(file);
  REQUIRE(bytes.size() > layout::header_size);
  CHECK(bytes.substr(0, 16) == "hookforge-ckpt\r\n");
  layout::header_bytes header{};
  std::copy_n(bytes.begin(), layout::header_size, header.begin());
  const auto decoded = layout::decode(header);
  REQUIRE(decoded);
  CHECK(decoded->version == 2);
  CHECK(decoded->payload_size == bytes.size() - layout::header_size);
  CHECK(decoded->payload_crc ==
        hookforge::detail::crc32(0, bytes.data() + layout::header_size, decoded->payload_size));
  CHECK(bytes.substr(layout::header_size, 4) == std::string("PK\x03\x04", 4));  // a torch archive
}

TEST_CASE("checkpoint: a save that runs out of space throws and keeps the previous file",
          "[checkpoint]") {
  // RLIMIT_FSIZE makes write() fail with EFBIG past the limit, as a full disk fails with
  // ENOSPC; SIGXFSZ ignored so that the error reaches the writer. One child per limit.
  tfx::temp_dir dir;
  const auto file = dir.path / "last.ckpt";
  torch::manual_seed(1);
  torch::nn::Linear old_model(16, 16), new_model(64, 64);
  checkpoint_writer{}.add_module("model", old_model).add_int("step", 1).save(file);
  const auto previous = tfx::read_bytes(file);
  checkpoint_writer{}
      .add_module("model", new_model)
      .add_int("step", 2)
      .save(dir.path / "full.ckpt");
  const auto full_size = static_cast<rlim_t>(fs::file_size(dir.path / "full.ckpt"));
  fs::remove(dir.path / "full.ckpt");

  const auto save_with_limit = [&](rlim_t limit) {
    return run_in_child([&](int out) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit lim{limit, limit};
      if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 3;
      std::string message = "saved";
      int code = 0;
      try {
        checkpoint_writer{}.add_module("model", new_model).add_int("step", 2).save(file);
      } catch (const std::exception& e) {
        message = e.what();
        code = 1;
      }
      (void)!::write(out, message.data(), message.size());
      return code;
    });
  };

  std::vector<rlim_t> limits{0, 1, 35, 36, 37, 100, full_size - 1};
  for (rlim_t step = 1; step < 40; ++step) limits.push_back(full_size * step / 40);
  for (const rlim_t limit : limits) {
    INFO("file size limit " << limit << " of " << full_size);
    const auto child = save_with_limit(limit);
    INFO(child.output);
    REQUIRE(child.exited);
    REQUIRE(child.code == 1);
    CHECK_THAT(child.output, Catch::Contains("cannot write '" + file.string() + "'"));
    CHECK_THAT(child.output, Catch::Contains("File too large"));
    CHECK(tfx::read_bytes(file) == previous);
    CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});
  }
  torch::nn::Linear loaded(16, 16);
  checkpoint_reader ckpt(file);
  ckpt.load_module("model", loaded);
  CHECK(torch::equal(loaded->weight, old_model->weight));
  CHECK(ckpt.load_int("step") == 1);

  // With room for the whole file, the save succeeds.
  const auto child = save_with_limit(full_size);
  INFO(child.output);
  REQUIRE(child.exited);
  CHECK(child.code == 0);
  torch::nn::Linear bigger(64, 64);
  checkpoint_reader(file).load_module("model", bigger);
  CHECK(torch::equal(bigger->weight, new_model->weight));
  CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});
}

TEST_CASE("checkpoint: every flipped byte is detected", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto good = dir.path / "good.ckpt";
  torch::manual_seed(2);
  torch::nn::Linear model(6, 5);
  checkpoint_writer{}
      .add_module("model", model)
      .add_int("step", 77)
      .add_state("trainer", {{"completed_epochs", c10::IValue(std::int64_t{4})}})
      .save(good);
  const auto bytes = tfx::read_bytes(good);
  const auto bad = dir.path / "bad.ckpt";

  // Flipped in place (one pwrite, then put back): rewriting the file thousands of times
  // costs seconds on some file systems.
  write_bytes(bad, bytes);
  const int fd = ::open(bad.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  const auto put = [&](std::size_t offset, char byte) {
    REQUIRE(::pwrite(fd, &byte, 1, static_cast<off_t>(offset)) == 1);
  };
  int detected = 0, intact = 0;
  for (std::size_t offset = 0; offset < bytes.size(); ++offset) {
    for (const unsigned char mask : {0x01, 0xFF}) {
      put(offset, static_cast<char>(bytes[offset] ^ mask));
      try {
        checkpoint_reader ckpt(bad);
        torch::nn::Linear loaded(6, 5);
        ckpt.load_module("model", loaded);
        const bool same = torch::equal(loaded->weight, model->weight) &&
                          torch::equal(loaded->bias, model->bias) && ckpt.load_int("step") == 77 &&
                          ckpt.load_state_value<std::int64_t>("trainer", "completed_epochs") == 4;
        INFO("byte " << offset << " ^ " << int(mask) << " loaded silently");
        CHECK(same);  // never silently wrong values
        ++intact;
      } catch (const checkpoint_error& e) {
        INFO(e.what());
        CHECK_THAT(e.what(), Catch::StartsWith("hookforge checkpoint '" + bad.string() + "': "));
        ++detected;
      }
    }
    put(offset, bytes[offset]);
  }
  ::close(fd);
  // The header and the payload are both checksummed: nothing loads.
  CHECK(intact == 0);
  CHECK(detected == static_cast<int>(2 * bytes.size()));

  // The messages say what is wrong.
  auto payload_flip = bytes;
  payload_flip[bytes.size() / 2] ^= 0x10;
  write_bytes(bad, payload_flip);
  CHECK_THAT(error_of([&] { checkpoint_reader{bad}; }),
             Catch::Contains("the file is corrupted: the CRC-32 of its"));
  auto header_flip = bytes;
  header_flip[20] ^= 0x01;  // payload size
  write_bytes(bad, header_flip);
  CHECK_THAT(error_of([&] { checkpoint_reader{bad}; }),
             Catch::Contains("the file is corrupted: its header's checksum does not match"));
}

TEST_CASE("checkpoint: truncated and extended files are errors naming the file", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto good = dir.path / "good.ckpt";
  checkpoint_writer{}.add_module("model", torch::nn::Linear(3, 3)).save(good);
  const auto bytes = tfx::read_bytes(good);
  const auto bad = dir.path / "bad.ckpt";
  for (const std::size_t keep : {std::size_t{0}, std::size_t{10}, std::size_t{35}, std::size_t{36},
                                 bytes.size() / 2, bytes.size() - 1}) {
    INFO("first " << keep << " bytes");
    write_bytes(bad, bytes.substr(0, keep));
    const auto msg = error_of([&] { checkpoint_reader{bad}; });
    CHECK_THAT(msg, Catch::StartsWith("hookforge checkpoint '" + bad.string() + "': "));
    CHECK_THAT(msg, Catch::Contains(keep == 0 ? "the file is empty" : "the file is truncated"));
  }
  write_bytes(bad, bytes + "x");
  CHECK_THAT(error_of([&] { checkpoint_reader{bad}; }), Catch::Contains("the file is corrupted"));
}

TEST_CASE("checkpoint: version 1 files (no header, no checksum) still load", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "v1.ckpt";
  {  // the layout version 1 wrote: the bare archive
    torch::serialize::OutputArchive root, sections, step;
    step.write("kind", c10::IValue(std::string("int")));
    step.write("value", c10::IValue(std::int64_t{41}));
    sections.write("step", step);
    root.write("format", c10::IValue(std::string("hookforge-checkpoint")));
    root.write("version", c10::IValue(std::int64_t{1}));
    root.write("sections", sections);
    root.save_to(file.string());
  }
  checkpoint_reader ckpt(file);
  CHECK(ckpt.sections() == std::vector<std::string>{"step"});
  CHECK(ckpt.load_int("step") == 41);
}

TEST_CASE("checkpoint: load_state_value names file, section and key", "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "s.ckpt";
  checkpoint_writer{}
      .add_state("trainer",
                 {{"completed_epochs", c10::IValue(std::int64_t{3})}, {"best", c10::IValue(0.5)}})
      .add_int("step", 9)
      .save(file);
  checkpoint_reader ckpt(file);
  CHECK(ckpt.load_state_value<std::int64_t>("trainer", "completed_epochs") == 3);
  CHECK(ckpt.load_state_value("trainer", "best").toDouble() == 0.5);

  const auto missing = error_of([&] { (void)ckpt.load_state_value("trainer", "epoch"); });
  CHECK_THAT(missing, Catch::StartsWith("hookforge checkpoint '" + file.string() + "': "));
  CHECK_THAT(missing, Catch::Contains("section 'trainer': the saved state has no 'epoch' (it has: "
                                      "'best', 'completed_epochs')"));
  const auto wrong_type =
      error_of([&] { (void)ckpt.load_state_value<std::string>("trainer", "best"); });
  CHECK_THAT(wrong_type, Catch::StartsWith("hookforge checkpoint '" + file.string() + "': "));
  CHECK_THAT(wrong_type, Catch::Contains("section 'trainer': the saved state's 'best' is a Double, "
                                         "expected a string"));
  CHECK_THAT(error_of([&] { (void)ckpt.load_state_value("nope", "x"); }),
             Catch::Contains("no section 'nope'"));
  CHECK_THAT(error_of([&] { (void)ckpt.load_state_value("step", "value"); }),
             Catch::Contains("section 'step' is of kind 'int', not 'state_dict'"));
}

TEST_CASE("atomic file: saves remove the stale temps of dead writers, not live ones",
          "[checkpoint]") {
  tfx::temp_dir dir;
  const auto file = dir.path / "last.ckpt";
  const auto temp_of = [&](const std::string& suffix) {
    const auto p = dir.path / ("last.ckpt.tmp." + suffix);
    write_bytes(p, "half a checkpoint");
    return p;
  };
  const live_process sleeper;  // stands for a live writer
  REQUIRE(sleeper.pid > 0);
  const auto dead = std::to_string(dead_pid());
  temp_of(dead);
  const auto fresh_live = temp_of(std::to_string(sleeper.pid));
  const auto old_live = temp_of("1");  // pid 1 lives (or was reused), but untouched for days
  fs::last_write_time(old_live, fs::file_time_type::clock::now() - std::chrono::hours(48));
  const auto locked = temp_of(std::to_string(dead_pid()));  // a writer in another PID namespace
  const int lock_fd = ::open(locked.c_str(), O_RDONLY);
  REQUIRE(::flock(lock_fd, LOCK_EX | LOCK_NB) == 0);
  temp_of("0");
  temp_of("-1");
  temp_of("12abc");
  write_bytes(dir.path / ("other.ckpt.tmp." + dead), "another target's");

  checkpoint_writer{}.add_int("step", 1).save(file);
  ::close(lock_fd);

  std::vector<std::string> kept{"last.ckpt",
                                "last.ckpt.tmp.-1",
                                "last.ckpt.tmp.0",
                                "last.ckpt.tmp.12abc",
                                fresh_live.filename().string(),
                                locked.filename().string(),
                                "other.ckpt.tmp." + dead};
  std::sort(kept.begin(), kept.end());
  CHECK(dir.files() == kept);
  CHECK(checkpoint_reader(file).load_int("step") == 1);

  // Unlocked now: the next write (any, through write_file_atomically) removes it.
  hookforge::write_file_atomically(file, std::string_view("plain"));
  CHECK_FALSE(fs::exists(locked));
  CHECK(fs::exists(fresh_live));
}

TEST_CASE(
    "checkpoint: saves killed at any moment leave a loadable file, and no temps after "
    "the next save",
    "[checkpoint]") {
  using clock = std::chrono::steady_clock;
  using namespace std::chrono_literals;
  tfx::temp_dir dir;
  const auto file = dir.path / "last.ckpt";
  torch::manual_seed(3);
  // 8 MiB modules: writing the temp file takes milliseconds even on a fast disk, so a kill on
  // sight of it lands mid-write on a loaded machine too.
  torch::nn::Linear even(1024, 2048), odd(1024, 2048);
  const auto save = [&](std::int64_t step) {
    checkpoint_writer{}.add_module("model", step % 2 ? odd : even).add_int("step", step).save(file);
  };
  // How long a save takes here and now (a loaded machine's disk, too): the kills' delays are
  // fractions of it.
  const auto timing = clock::now();
  for (int i = 0; i < 4; ++i) save(0);
  const auto save_time =
      std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - timing) / 4;

  // Each child saves steps 1, 2, ... for ever and reports each step whose save returned (the
  // file renamed into place) through a pipe. Of every three kills, two wait for the child's
  // first report, so the file must then be the child's, and come in a later save: one a
  // random fraction of a save later, one as soon as that save's temp file is seen, so while
  // it is being written; a kill mid-write leaves the temp behind (last.ckpt.tmp.<pid>). The
  // third comes at a random moment from the fork, before, during or after the child's first
  // save. The next child's first save removes the dead one's temp. Until a kill has landed
  // mid-write there are more kills, up to 60 (or 8 s).
  enum class moment { after_a_report, on_sight_of_the_temp, at_random };
  using enum moment;
  int kills = 0, after_a_save = 0, mid_write = 0;
  std::int64_t previous = 0;  // the step in the file before this child
  const auto started = clock::now();
  while (kills < 12 || (mid_write == 0 && kills < 60 && clock::now() - started < 8s)) {
    int report[2];
    REQUIRE(::pipe(report) == 0);
    const pid_t saver = ::fork();
    REQUIRE(saver >= 0);
    if (saver == 0) {
      ::close(report[0]);
      for (std::int64_t step = 1;; ++step) {
        save(step);
        if (::write(report[1], &step, sizeof step) != static_cast<ssize_t>(sizeof step)) ::_exit(1);
      }
    }
    ::close(report[1]);
    std::string reports;  // the child's int64 steps, in order
    const auto read_reports = [&](int timeout_ms) {
      char buf[512];
      ::pollfd pfd{report[0], POLLIN, 0};
      if (::poll(&pfd, 1, timeout_ms) <= 0) return false;
      const ssize_t n = ::read(report[0], buf, sizeof buf);
      if (n > 0) reports.append(buf, static_cast<std::size_t>(n));
      return n > 0;
    };
    const moment when = static_cast<moment>(kills % 3);
    const double fraction =
        static_cast<double>(7919 * kills % 1000) / 1000.0;  // spread over [0, 1)
    const auto temp = dir.path / ("last.ckpt.tmp." + std::to_string(saver));
    bool reported_in_time = true;
    if (when != at_random) {
      const auto deadline = clock::now() + 20s;
      while (reports.size() < sizeof(std::int64_t) && clock::now() < deadline) read_reports(100);
      reported_in_time = reports.size() >= sizeof(std::int64_t);
    }
    if (when == on_sight_of_the_temp) {
      const auto deadline = clock::now() + 20s;
      while (reported_in_time && !fs::exists(temp) && clock::now() < deadline)
        std::this_thread::sleep_for(20us);
    } else {
      std::this_thread::sleep_for(save_time * (when == at_random ? 3 * fraction : fraction));
    }
    ::kill(saver, SIGKILL);
    ::waitpid(saver, nullptr, 0);
    while (read_reports(1000)) {
    }  // every report the child made before it died (then end of file)
    ::close(report[0]);
    ++kills;

    INFO("kill " << kills << " ("
                 << (when == after_a_report ? "after a report"
                     : when == at_random    ? "at random"
                                            : "on sight of the temp")
                 << ")");
    REQUIRE(reported_in_time);  // a save takes well under 20 s
    std::int64_t reported = 0;  // the last step the child saved
    if (reports.size() >= sizeof reported)
      std::memcpy(&reported,
                  reports.data() + (reports.size() / sizeof reported - 1) * sizeof reported,
                  sizeof reported);
    after_a_save += reported >= 1;
    mid_write += fs::exists(temp);

    checkpoint_reader ckpt(file);
    torch::nn::Linear loaded(1024, 2048);
    ckpt.load_module("model", loaded);
    const auto step = ckpt.load_int("step");
    CHECK(torch::equal(loaded->weight, (step % 2 ? odd : even)->weight));
    // The last save the child reported, or its next one if that was renamed into place but not
    // yet reported; before its first report, the previous child's last one, or its own first.
    if (reported >= 1)
      CHECK((step == reported || step == reported + 1));
    else
      CHECK((step == previous || step == 1));
    previous = step;
  }
  INFO(kills << " kills: " << after_a_save << " after a completed save, " << mid_write
             << " while writing the temp file (a save takes " << save_time.count() << " us here)");
  CHECK(after_a_save >= 1);
  CHECK(mid_write >= 1);
  checkpoint_writer{}.add_module("model", even).add_int("step", 0).save(file);
  CHECK(dir.files() == std::vector<std::string>{"last.ckpt"});
}
