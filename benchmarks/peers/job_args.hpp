// benchmarks/peers/job_args.hpp — the command line of the C++ peers of compare.py
// (hookforge_peer_plain, hookforge_peer_api): `--epochs E --work-dir W`, the work folder made.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace peers {

struct job_args {
  int epochs = 10;
  std::filesystem::path work_dir;
};

/// The arguments, or a usage line on stderr and exit(2) for anything else.
inline job_args parse_job_args(int argc, char** argv, std::filesystem::path work_dir) {
  job_args args{.epochs = 10, .work_dir = std::move(work_dir)};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--epochs") {
      args.epochs = std::atoi(argv[i + 1]);
    } else if (key == "--work-dir") {
      args.work_dir = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: %s [--epochs E] [--work-dir W]\n", argv[0]);
      std::exit(2);
    }
  }
  std::filesystem::create_directories(args.work_dir);
  return args;
}

}  // namespace peers
