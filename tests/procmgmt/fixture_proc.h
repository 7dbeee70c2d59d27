// A writable copy of tests/procmgmt/fixtures/proc with fd/ links added:
// which processes have NVIDIA device files (or others) open.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace gd::test {

class FixtureProc {
 public:
  FixtureProc() {
    char tmpl[] = "/tmp/gd_procmgmt_fixture_XXXXXX";
    root_ = mkdtemp(tmpl);
    std::filesystem::copy(std::string(GD_PROCMGMT_FIXTURES) + "/proc", proc(),
                          std::filesystem::copy_options::recursive);
  }
  ~FixtureProc() { std::filesystem::remove_all(root_); }
  FixtureProc(const FixtureProc&) = delete;
  FixtureProc& operator=(const FixtureProc&) = delete;

  std::string proc() const { return root_ + "/proc"; }
  // /proc/PID/fd/FD -> target (a dangling link is fine: only readlink is used).
  void open_fd(uint32_t pid, int fd, const std::string& target) const {
    std::string dir = proc() + "/" + std::to_string(pid) + "/fd";
    std::filesystem::create_directories(dir);
    std::filesystem::create_symlink(target, dir + "/" + std::to_string(fd));
  }

 private:
  std::string root_;
};

}  // namespace gd::test
