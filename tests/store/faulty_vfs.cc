#include "faulty_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <mutex>

namespace gd::testing {

std::atomic<bool> FaultyVfs::disk_full{false};
std::atomic<int> FaultyVfs::failed_writes{0};

namespace {

// Our file object; the wrapped VFS's file follows it in the same
// allocation (szOsFile covers both).
struct FaultyFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;
sqlite3_io_methods g_io;

sqlite3_file* real(sqlite3_file* f) {
  return reinterpret_cast<FaultyFile*>(f)->real;
}

int f_close(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int f_read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return real(f)->pMethods->xRead(real(f), buf, n, off);
}
int f_write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  if (FaultyVfs::disk_full) {
    ++FaultyVfs::failed_writes;
    return SQLITE_FULL;
  }
  return real(f)->pMethods->xWrite(real(f), buf, n, off);
}
int f_truncate(sqlite3_file* f, sqlite3_int64 size) {
  return real(f)->pMethods->xTruncate(real(f), size);
}
int f_sync(sqlite3_file* f, int flags) {
  return real(f)->pMethods->xSync(real(f), flags);
}
int f_size(sqlite3_file* f, sqlite3_int64* size) {
  return real(f)->pMethods->xFileSize(real(f), size);
}
int f_lock(sqlite3_file* f, int l) {
  return real(f)->pMethods->xLock(real(f), l);
}
int f_unlock(sqlite3_file* f, int l) {
  return real(f)->pMethods->xUnlock(real(f), l);
}
int f_reserved(sqlite3_file* f, int* out) {
  return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int f_control(sqlite3_file* f, int op, void* arg) {
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int f_sector(sqlite3_file* f) {
  return real(f)->pMethods->xSectorSize(real(f));
}
int f_device(sqlite3_file* f) {
  return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
int f_shm_map(sqlite3_file* f, int pg, int sz, int extend, void volatile** p) {
  return real(f)->pMethods->xShmMap(real(f), pg, sz, extend, p);
}
int f_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void f_shm_barrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int f_shm_unmap(sqlite3_file* f, int del) {
  return real(f)->pMethods->xShmUnmap(real(f), del);
}
int f_fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** p) {
  return real(f)->pMethods->xFetch(real(f), off, n, p);
}
int f_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return real(f)->pMethods->xUnfetch(real(f), off, p);
}

int v_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags,
           int* out_flags) {
  auto* ff = reinterpret_cast<FaultyFile*>(f);
  ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
  int rc = g_real->xOpen(g_real, name, ff->real, flags, out_flags);
  // SQLite calls xClose exactly when pMethods is set.
  ff->base.pMethods = ff->real->pMethods ? &g_io : nullptr;
  return rc;
}

}  // namespace

void FaultyVfs::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    g_vfs = *g_real;
    g_vfs.zName = "gd_faulty";
    g_vfs.pNext = nullptr;
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultyFile)) + g_real->szOsFile;
    g_vfs.xOpen = v_open;
    std::memset(&g_io, 0, sizeof g_io);
    g_io.iVersion = 3;
    g_io.xClose = f_close;
    g_io.xRead = f_read;
    g_io.xWrite = f_write;
    g_io.xTruncate = f_truncate;
    g_io.xSync = f_sync;
    g_io.xFileSize = f_size;
    g_io.xLock = f_lock;
    g_io.xUnlock = f_unlock;
    g_io.xCheckReservedLock = f_reserved;
    g_io.xFileControl = f_control;
    g_io.xSectorSize = f_sector;
    g_io.xDeviceCharacteristics = f_device;
    g_io.xShmMap = f_shm_map;
    g_io.xShmLock = f_shm_lock;
    g_io.xShmBarrier = f_shm_barrier;
    g_io.xShmUnmap = f_shm_unmap;
    g_io.xFetch = f_fetch;
    g_io.xUnfetch = f_unfetch;
    sqlite3_vfs_register(&g_vfs, 1);
  });
}

}  // namespace gd::testing
