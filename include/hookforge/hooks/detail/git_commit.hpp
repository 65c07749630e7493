// hookforge/hooks/detail/git_commit.hpp — the commit a working directory is checked out at,
// read from its .git folder (no git program is run): what MLflowLogger tags a run with, as
// MLflow's own clients tag it (mlflow.source.git.commit).
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace hookforge::detail {

/// The commit HEAD names in the repository holding `dir` (looked up through its parents),
/// or nullopt when there is none or it cannot be read (a worktree, a bare clone).
inline std::optional<std::string> git_commit(std::filesystem::path dir) {
  std::error_code ec;
  dir = std::filesystem::absolute(dir, ec);
  if (ec) return std::nullopt;
  for (; !dir.empty(); dir = dir.parent_path()) {
    const auto git = dir / ".git";
    if (std::filesystem::is_directory(git, ec)) {
      auto first_line = [](const std::filesystem::path& file) {
        std::ifstream in(file);
        std::string line;
        std::getline(in, line);
        return line;
      };
      auto is_hash = [](std::string_view s) {
        return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
      };
      std::string head = first_line(git / "HEAD");
      if (is_hash(head)) return head;  // a detached HEAD
      if (!head.starts_with("ref: ")) return std::nullopt;
      const std::string ref = head.substr(5);
      if (auto loose = first_line(git / ref); is_hash(loose)) return loose;
      std::ifstream packed(git / "packed-refs");  // "<hash> <ref>" lines
      for (std::string line; std::getline(packed, line);)
        if (line.size() > 41 && line.substr(41) == ref && is_hash(line.substr(0, 40)))
          return line.substr(0, 40);
      return std::nullopt;
    }
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

}  // namespace hookforge::detail
