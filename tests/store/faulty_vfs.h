// A SQLite VFS that wraps the default one and fails every xWrite with
// SQLITE_FULL while `disk_full` is set: a full disk on demand, for the
// store's disk-full tests. install() makes it the process's default VFS.
#pragma once

#include <atomic>

namespace gd::testing {

struct FaultyVfs {
  static void install();
  static std::atomic<bool> disk_full;
  static std::atomic<int> failed_writes;
};

}  // namespace gd::testing
