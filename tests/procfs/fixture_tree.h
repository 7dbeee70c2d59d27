// A writable copy of tests/procfs/fixtures in a temp directory, so tests can
// rewrite counters between two samples.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gd::test {

class FixtureTree {
 public:
  FixtureTree() {
    char tmpl[] = "/tmp/gd_procfs_fixture_XXXXXX";
    root_ = mkdtemp(tmpl);
    std::filesystem::copy(GD_PROCFS_FIXTURES, root_,
                          std::filesystem::copy_options::recursive);
  }
  ~FixtureTree() { std::filesystem::remove_all(root_); }
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  std::string proc() const { return root_ + "/proc"; }
  std::string sys() const { return root_ + "/sys"; }
  // A sys root that does not exist, to exercise the no-/sys fallbacks.
  std::string root_for_test_missing_sys() const { return root_ + "/no-sys"; }

  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(root_ + "/" + rel, std::ios::trunc | std::ios::binary)
        << text;
  }
  void remove(const std::string& rel) const {
    std::filesystem::remove_all(root_ + "/" + rel);
  }

 private:
  std::string root_;
};

}  // namespace gd::test
