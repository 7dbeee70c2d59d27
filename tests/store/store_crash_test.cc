// kill -9 of the writer: the flushed batches survive, the DB stays sound,
// and reopening continues it.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "store_test_util.h"

namespace gd {
namespace {

using testing::export_all;
using testing::kT0;
using testing::make_sample;
using testing::open_store;
using testing::StoreDir;

constexpr size_t kBatch = 10;
// Samples 10 s apart: a block window (600 s) every 60 samples, so the kill
// also lands near block seals, not only between batches.
constexpr double kStep = 10;

std::string integrity_check(const std::string& path) {
  sqlite3* db = nullptr;
  std::string result = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return result;
}

// The child appends forever and reports, after each batch is committed,
// how many samples are durable.
[[noreturn]] void writer_child(const std::string& path, int report_fd,
                               int start) {
  auto store = open_store(path, kBatch);
  for (int i = start;; ++i) {
    store->append(make_sample(kT0 + i * kStep, i, 8));
    if ((i + 1) % kBatch == 0) {
      int durable = i + 1;
      if (write(report_fd, &durable, sizeof durable) != sizeof durable)
        _exit(3);
    }
  }
}

int run_and_kill(const std::string& path, int start, int kill_after) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    writer_child(path, fds[1], start);
  }
  close(fds[1]);
  int durable = 0, v = 0;
  while (durable < kill_after && read(fds[0], &v, sizeof v) == sizeof v)
    durable = v;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // The writer may have flushed (and reported) more batches between the read
  // above and the kill: those are durable too. The child is dead, so this
  // reads what is left in the pipe and then EOF.
  while (read(fds[0], &v, sizeof v) == sizeof v) durable = v;
  close(fds[0]);
  EXPECT_TRUE(WIFSIGNALED(status));
  return durable;
}

TEST(StoreCrash, KillNineLosesAtMostTheUnflushedBatch) {
  StoreDir dir;
  const std::string path = dir.path("h.db");
  int durable = run_and_kill(path, 0, 250);
  ASSERT_GE(durable, 250);
  EXPECT_EQ(integrity_check(path), "ok");

  size_t kept = 0;
  {
    auto store = open_store(path, kBatch);
    auto back = export_all(*store, dir.path("a.jsonl"));
    kept = back.size();
    EXPECT_GE(kept, static_cast<size_t>(durable));
    // At most the batch in flight beyond what was reported.
    EXPECT_LE(kept, static_cast<size_t>(durable) + kBatch);
    for (size_t i = 0; i < kept; ++i) ASSERT_EQ(back[i].t, kT0 + i * kStep);
  }

  // A restarted writer continues the same DB; kill it again.
  int durable2 =
      run_and_kill(path, static_cast<int>(kept), static_cast<int>(kept) + 200);
  EXPECT_EQ(integrity_check(path), "ok");
  auto store = open_store(path, kBatch);
  auto back = export_all(*store, dir.path("b.jsonl"));
  EXPECT_GE(back.size(), static_cast<size_t>(durable2));
  for (size_t i = 0; i < back.size(); ++i)
    ASSERT_EQ(back[i].t, kT0 + i * kStep);
}

}  // namespace
}  // namespace gd
