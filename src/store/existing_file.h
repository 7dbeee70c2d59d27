// The checks `db repair` makes before it opens a history for writing: it
// is often run as root on a path someone else chose, so it must not create
// a file, nor write through a symlink it did not make.
#pragma once

#include <string>

namespace gd::store {

// Throws StoreError "PATH: why" unless `path` is an existing regular file
// (not a symlink) and none of SQLite's side files (PATH-wal, -shm,
// -journal) is a symlink or anything but a regular file. SQLite's
// SQLITE_OPEN_NOFOLLOW then refuses a symlink swapped in afterwards.
void check_existing_file(const std::string& path);

}  // namespace gd::store
