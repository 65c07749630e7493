// Where a run writes, and what it may do to an earlier run's files: see work_dir.hpp.
#include "work_dir.hpp"

#include <algorithm>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/core.h>

#include "hookforge/core/runtime/join.hpp"
#include "cluster.hpp"
#include "exits.hpp"
#include "output_lock.hpp"

namespace hookforge::run::detail {

namespace fs = std::filesystem;

namespace {

/// The names of `dir`'s entries but the lock file, sorted ("" entries when it does not exist).
std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name != output_lock::file_name) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// "'a', 'b', 'c' and 4 more".
std::string some_of(const std::vector<std::string>& names) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) shown.push_back("'" + names[i] + "'");
  auto text = hookforge::join_names(shown, ", ");
  if (names.size() > 3) text += fmt::format(" and {} more", names.size() - 3);
  return text;
}

fs::path version(const fs::path& base, int n) {
  return n == 1 ? base : fs::path(fmt::format("{}-{}", base.string(), n));
}

}  // namespace

bool holds_run(const fs::path& dir) { return !entries_of(dir).empty(); }

fs::path default_work_dir(const fs::path& base, start_mode mode) {
  int n = 1;
  if (mode == start_mode::resume) {
    int last = 1;
    for (; fs::exists(version(base, n)); ++n)
      if (holds_run(version(base, n))) last = n;
    return version(base, last);
  }
  while (holds_run(version(base, n))) ++n;
  return version(base, n);
}

std::optional<std::string> prepare_work_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fmt::format("cannot create the output directory '{}': {}", dir.string(), ec.message());
  if (!fs::is_directory(dir, ec))
    return fmt::format("the output directory '{}' is not a directory", dir.string());
  const auto probe = dir / ".hookforge-run-write-test";
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    out << "ok\n";
    out.flush();
    if (!out) {
      std::error_code rm;
      fs::remove(probe, rm);
      return fmt::format("the output directory '{}' is not writable", dir.string());
    }
  }
  fs::remove(probe, ec);
  return std::nullopt;
}

std::optional<std::string> claim_work_dir(const fs::path& dir, start_mode mode, bool written_by_run,
                                          const fs::path& checkpoints) {
  const auto names = entries_of(dir);
  if (names.empty()) return std::nullopt;
  const auto foreign = [&] {
    return fmt::format(
        "the output directory '{}' holds files that no hookforge-run wrote ({}; no {}): a run "
        "neither mixes its files with them nor removes them; choose a new or empty --output",
        dir.string(), some_of(names), output_lock::file_name);
  };
  switch (mode) {
    case start_mode::fresh:
      if (!written_by_run) return foreign();
      return fmt::format(
          "the output directory '{}' holds an earlier run ({}): --resume continues it, "
          "--overwrite discards it, or choose another --output",
          dir.string(), some_of(names));
    case start_mode::overwrite: {
      if (!written_by_run) return foreign();
      for (const auto& name : names) {
        std::error_code ec;
        fs::remove_all(dir / name, ec);
        if (ec)
          return fmt::format("--overwrite: cannot remove '{}': {}", (dir / name).string(),
                             ec.message());
      }
      return std::nullopt;
    }
    case start_mode::resume: {
      // Called where there is no last_checkpoint: a new run starts here unless that would
      // replace checkpoints.
      std::vector<std::string> found;
      for (const auto& name : entries_of(checkpoints))
        if (name.ends_with(".pt")) found.push_back(name);
      if (found.empty()) return std::nullopt;
      return fmt::format(
          "--resume: the {} '{}' holds checkpoints ({}) but no last_checkpoint: --resume CKPT "
          "names the one to continue from, --overwrite discards them",
          checkpoints == dir ? "output directory" : "checkpoint folder", checkpoints.string(),
          some_of(found));
    }
  }
  return std::nullopt;
}

std::variant<output_lock, int> take_work_dir(const work_dir_request& r) {
  namespace fs = std::filesystem;
  const bool written_by_run = fs::exists(r.dir / output_lock::file_name);
  if (auto problem = prepare_work_dir(r.dir)) return run_failure(*problem);
  auto taken = output_lock::take(r.dir);
  if (auto* busy = std::get_if<std::string>(&taken)) return refusal(*busy);
  auto& lock = std::get<output_lock>(taken);
  const bool resumes_checkpoint =
      r.mode == start_mode::resume &&
      (r.resume_file || fs::exists(fs::symlink_status(r.checkpoints / "last_checkpoint")));
  if (!resumes_checkpoint)
    if (auto problem = claim_work_dir(r.dir, r.mode, written_by_run, r.checkpoints)) {
      if (!written_by_run) lock.remove(r.dir);
      return refusal(*problem);
    }
  if (r.job)
    if (auto problem = record_job(r.dir, *r.job)) return run_failure(*problem);
  if (r.default_base && r.dir != *r.default_base && r.mode != start_mode::resume)
    fmt::print("hookforge-run: {} holds an earlier run; this one writes to {}\n",
               r.default_base->string(), r.dir.string());
  return std::move(lock);
}

}  // namespace hookforge::run::detail
