// Malformed configs kept as files (bad/, listed with their expected line and message in
// bad/expected.txt): each is one config_error naming the file, the line and the key —
// never a crash, never a half-built run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "helpers.hpp"

using namespace cfg_fixtures;
namespace cfg = hookforge::config;

namespace {

struct expectation {
  std::string file;
  std::size_t line;
  std::string fragment;
};

std::string trim(std::string s) {
  auto b = s.find_first_not_of(' ');
  auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<expectation> expectations() {
  std::ifstream in(std::string(HOOKFORGE_CONFIG_TEST_DIR) + "/bad/expected.txt");
  std::vector<expectation> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto a = line.find('|');
    auto b = line.find('|', a + 1);
    out.push_back({trim(line.substr(0, a)), std::stoul(trim(line.substr(a + 1, b - a - 1))),
                   trim(line.substr(b + 1))});
  }
  return out;
}

}  // namespace

TEST_CASE("every malformed config under bad/ is one located config_error", "[config][bad]") {
  auto all = expectations();
  REQUIRE(all.size() >= 25);
  for (const auto& x : all) {
    auto path = std::string(HOOKFORGE_CONFIG_TEST_DIR) + "/bad/" + x.file;
    INFO(x.file);
    std::string message;
    std::size_t line = 0;
    try {
      build_all(cfg::document::load_file(path));
    } catch (const cfg::config_error& e) {
      message = e.what();
      line = e.where().line;
    }
    INFO(message);
    REQUIRE(!message.empty());
    CHECK(line == x.line);
    CHECK(message.starts_with(path + ":" + std::to_string(x.line) + ":"));
    CHECK(message.find(x.fragment) != std::string::npos);
  }
}

TEST_CASE("every file under bad/ is listed in expected.txt", "[config][bad]") {
  auto all = expectations();
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(HOOKFORGE_CONFIG_TEST_DIR) + "/bad")) {
    auto name = entry.path().filename().string();
    if (name == "expected.txt") continue;
    ++files;
    bool listed = false;
    for (const auto& x : all) listed = listed || x.file == name;
    INFO(name);
    CHECK(listed);
  }
  CHECK(files == all.size());
}

TEST_CASE("unreadable, missing and oversized files are located errors", "[config][bad]") {
  // this process's own folder: two builds testing at once must not share it
  auto dir = std::filesystem::temp_directory_path() /
             ("hookforge_config_tests_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);

  CHECK_THROWS_WITH(
      cfg::document::load_file(dir / "missing.yaml"),
      Catch::EndsWith(
          "missing.yaml:1:1: <document>: expected a readable config file, got no such file"));
  CHECK_THROWS_WITH(
      cfg::document::load_file(dir),
      Catch::Contains(":1:1: <document>: expected a readable config file, got a directory"));
  // What the system says, not "no such file": a symlink loop, a path through a file.
  std::filesystem::create_symlink(dir / "loop_b.yaml", dir / "loop_a.yaml");
  std::filesystem::create_symlink(dir / "loop_a.yaml", dir / "loop_b.yaml");
  CHECK_THROWS_WITH(cfg::document::load_file(dir / "loop_a.yaml"),
                    Catch::EndsWith("loop_a.yaml:1:1: <document>: expected a readable config "
                                    "file, got too many levels of symbolic links"));
  std::ofstream(dir / "plain") << "a: 1\n";
  CHECK_THROWS_WITH(cfg::document::load_file(dir / "plain" / "x.yaml"),
                    Catch::EndsWith("expected a readable config file, got not a directory"));
  // Deeper than yaml-cpp's parser goes: said so, not "bad file" (yaml-cpp's message).
  {
    std::ofstream(dir / "deep.yaml")
        << "a: " << std::string(3000, '[') << std::string(3000, ']') << "\n";
  }
  CHECK_THROWS_WITH(cfg::document::load_file(dir / "deep.yaml"),
                    Catch::Matches(".*deep.yaml:1:[0-9]+: <document>: expected YAML nested fewer "
                                   "levels deep, got YAML nested deeper than [0-9]+ levels, where "
                                   "yaml-cpp stops"));

  auto big = dir / "ten_megabytes.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    std::string line = "key_with_some_padding: value_with_some_more_padding_to_fill_a_line\n";
    for (std::size_t written = 0; written < (std::size_t{10} << 20); written += line.size())
      out << line;
  }
  CHECK_THROWS_WITH(cfg::document::load_file(big),
                    Catch::Contains("ten_megabytes.yaml:1:1: <document>: expected a config of at "
                                    "most 4194304 bytes, got a larger file"));
  std::filesystem::remove(big);

  auto locked = dir / "locked.yaml";
  std::ofstream(locked) << "a: 1\n";
  std::filesystem::permissions(locked, std::filesystem::perms::none);
  if (!std::ifstream(locked)) {  // root reads anything
    CHECK_THROWS_WITH(cfg::document::load_file(locked),
                      Catch::Contains("locked.yaml:1:1: <document>: expected a readable config "
                                      "file, got a file that cannot be opened"));
  }
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  std::filesystem::remove_all(dir);
}
