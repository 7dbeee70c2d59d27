// Bad paths and files: one-line StoreError naming the path, never a crash.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "store_test_util.h"

namespace gd {
namespace {

using testing::kT0;
using testing::make_sample;
using testing::open_store;
using testing::sql;
using testing::sql_int;
using testing::StoreDir;

// Runs `fn`, which must throw StoreError with a one-line message naming
// `path` and containing `why`.
template <typename Fn>
void expect_store_error(Fn fn, const std::string& path,
                        const std::string& why) {
  try {
    fn();
    ADD_FAILURE() << "no error for " << path;
  } catch (const StoreError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(StoreErrors, MissingDirectory) {
  std::string path = "/nonexistent-dir/gd/h.db";
  expect_store_error([&] { open_store(path); }, path, "cannot open");
}

TEST(StoreErrors, PathIsADirectory) {
  StoreDir dir;
  std::string path = dir.path("");
  expect_store_error([&] { open_store(path); }, path, "cannot open");
}

TEST(StoreErrors, NotASqliteFile) {
  StoreDir dir;
  std::string path = dir.path("garbage.db");
  std::ofstream(path) << std::string(8192, 'x');
  expect_store_error([&] { open_store(path); }, path,
                     "not a gpudoctor history database");
}

TEST(StoreErrors, ForeignSqliteDatabaseIsLeftAlone) {
  StoreDir dir;
  std::string path = dir.path("other.db");
  sql(path, "CREATE TABLE users(name TEXT); INSERT INTO users VALUES('bob');");
  expect_store_error([&] { open_store(path); }, path,
                     "not a gpudoctor history database");
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM users"), 1);
  EXPECT_EQ(sql_int(path, "PRAGMA user_version"), 0);
}

TEST(StoreErrors, SchemaVersionIsRecordedAndNewerOnesRefused) {
  StoreDir dir;
  std::string path = dir.path("h.db");
  { open_store(path); }
  EXPECT_EQ(sql_int(path, "PRAGMA user_version"), 2);
  sql(path, "PRAGMA user_version=99");
  expect_store_error([&] { open_store(path); }, path, "newer");
}

// A version-1 file (before the alert history) is upgraded in place when
// serve opens it, keeping its samples; read-only it is read as it is.
TEST(StoreErrors, VersionOneFilesAreMigrated) {
  StoreDir dir;
  std::string path = dir.path("h.db");
  {
    auto s = open_store(path);
    for (int i = 0; i < 30; ++i)
      s->append(testing::make_sample(testing::kT0 + i, i));
    s->flush();
  }
  sql(path, "DROP TABLE alerts; PRAGMA user_version=1");
  {
    StoreOptions ro;
    ro.path = path;
    ro.read_only = true;
    auto s = HistoryStore::open(ro);
    EXPECT_TRUE(s->alerts(0, 1e12).empty());
    EXPECT_EQ(s->query("gpu.util_pct", 0, std::nullopt, 0, 1e12, 0)
                  .at(0)
                  .points.size(),
              30u);
  }
  EXPECT_EQ(sql_int(path, "PRAGMA user_version"), 1);
  {
    auto s = open_store(path);
    EXPECT_EQ(s->query("gpu.util_pct", 0, std::nullopt, 0, 1e12, 0)
                  .at(0)
                  .points.size(),
              30u);
    StoredAlert a;
    a.key = "k";
    a.id = "memory-leak";
    a.severity = "warning";
    a.started_at = testing::kT0;
    a.fired_at = testing::kT0 + 1;
    s->record_alert(a);
    EXPECT_EQ(s->alerts(0, 1e12).size(), 1u);
  }
  EXPECT_EQ(sql_int(path, "PRAGMA user_version"), 2);
}

TEST(StoreErrors, ReadOnlyOpenOfMissingFile) {
  StoreDir dir;
  std::string path = dir.path("none.db");
  StoreOptions o;
  o.path = path;
  o.read_only = true;
  expect_store_error([&] { HistoryStore::open(o); }, path, "cannot open");
}

TEST(StoreErrors, CorruptedBlockIsSkippedOnRead) {
  StoreDir dir;
  std::string path = dir.path("h.db");
  {
    auto store = open_store(path);
    for (int i = 0; i < 700; ++i) store->append(make_sample(kT0 + i, i));
  }
  sql(path, "UPDATE blocks SET num = zeroblob(100), rest = x'28b52ffd00'");
  auto store = open_store(path);
  ReadReport report;
  auto series =
      store->query("gpu.util_pct", 0, std::nullopt, 0, 1e18, 0, &report);
  EXPECT_EQ(report.skipped_blocks, 1u);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].points.size(), 100u);  // the pending samples
  EXPECT_EQ(testing::export_all(*store, dir.path("out.jsonl")).size(), 100u);
  // The store is still usable afterwards (the read transaction ended).
  store->append(make_sample(kT0 + 800, 800));
  EXPECT_NO_THROW(
      store->query("gpu.util_pct", 0, std::nullopt, kT0 + 650, 1e18, 0));
}

TEST(StoreErrors, TruncatedDatabaseFile) {
  StoreDir dir;
  std::string path = dir.path("h.db");
  {
    auto store = open_store(path);
    for (int i = 0; i < 1300; ++i) store->append(make_sample(kT0 + i, i, 8));
  }
  // Keep the first page only: the schema survives, the tables' pages do not.
  std::filesystem::resize_file(path, 4096);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  try {
    auto store = open_store(path);
    testing::export_all(*store, dir.path("out.jsonl"));
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gd
