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

std::string try_exec_full_binary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path =
      (ec ? std::filesystem::path(".") : self.parent_path()) / kFullBinaryName;
  std::vector<char*>& argv = saved_argv();
  if (argv.empty()) return "internal error: no command line kept";
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(path.c_str(), argv.data());
  return path + ", which cannot be started: " + std::strerror(errno);
}

void exec_full_binary(std::string_view what) {
  const std::string why = try_exec_full_binary();
  std::fprintf(stderr,
               "gpudoctor: %.*s runs in %s (install it beside gpudoctor)\n",
               static_cast<int>(what.size()), what.data(), why.c_str());
  std::exit(1);
}

}  // namespace gd
