#include "cli/full_binary.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace gd {
namespace {

std::vector<char*>& saved_argv() {
  static std::vector<char*> argv;
  return argv;
}

}  // namespace

void remember_command_line(int argc, char** argv) {
  saved_argv().assign(argv, argv + argc);
  saved_argv().push_back(nullptr);
}

void exec_full_binary(std::string_view what) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path =
      (ec ? std::filesystem::path(".") : self.parent_path()) / kFullBinaryName;
  std::vector<char*>& argv = saved_argv();
  if (argv.empty()) {
    std::fprintf(stderr, "gpudoctor: internal error: no command line kept\n");
    std::exit(1);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(path.c_str(), argv.data());
  std::fprintf(stderr,
               "gpudoctor: %.*s runs in %s, which cannot be started: %s "
               "(install it beside gpudoctor)\n",
               static_cast<int>(what.size()), what.data(), path.c_str(),
               std::strerror(errno));
  std::exit(1);
}

}  // namespace gd
