// src/run/exits.cpp — see exits.hpp.
#include "exits.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>

namespace hookforge::run::detail {

namespace {

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

int config_failure(const std::exception& e) {
  fmt::print(stderr, "{}\n", one_line(e.what()));
  return 2;
}

int usage_failure(const std::string& text) {
  fmt::print(stderr, "hookforge-run: {} (see hookforge-run --help)\n", one_line(text));
  return 2;
}

int refusal(const std::string& text) {
  fmt::print(stderr, "hookforge-run: {}\n", one_line(text));
  return 2;
}

int run_failure(const std::string& text) {
  fmt::print(stderr, "hookforge-run: {}\n", one_line(text));
  return 1;
}

}  // namespace hookforge::run::detail
