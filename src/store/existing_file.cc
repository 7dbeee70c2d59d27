#include "store/existing_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "store/history_store.h"

namespace gd::store {
namespace {

// What is wrong with `path` as a file to write, or "" when it is a regular
// file (or, with may_be_missing, absent).
std::string problem_of(const std::string& path, bool may_be_missing) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return may_be_missing ? ""
                            : "no such file (db repair opens an existing "
                              "history only)";
    return std::strerror(errno);
  }
  if (S_ISLNK(st.st_mode)) return "is a symlink (not followed)";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  return "";
}

}  // namespace

void check_existing_file(const std::string& path) {
  if (auto why = problem_of(path, false); !why.empty())
    throw StoreError(path + ": " + why);
  for (const char* side : {"-wal", "-shm", "-journal"}) {
    const std::string p = path + side;
    if (auto why = problem_of(p, true); !why.empty())
      throw StoreError(p + ": " + why);
  }
}

}  // namespace gd::store
