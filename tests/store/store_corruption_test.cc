// One corrupt block or pending batch costs only its own samples: reads skip
// and count it, open quarantines a bad batch, `db check`/`db repair` (the
// store side of them) find and move aside what is bad.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/store_check.h"
#include "store_test_util.h"

namespace gd {
namespace {

using testing::export_all;
using testing::kT0;
using testing::make_sample;
using testing::open_store;
using testing::sql;
using testing::sql_int;
using testing::StoreDir;

// 1900 samples at 1 s: sealed blocks [0,600), [600,1200), [1200,1800) and
// 10 pending batches of 10 for [1800,1900).
std::string filled_db(const StoreDir& dir) {
  return testing::filled_history(dir, 1900);
}

// A zstd frame header followed by garbage: what a flipped disk sector or a
// torn write leaves.
constexpr const char* kGarbage = "x'28b52ffd0058deadbeefdeadbeef0102030405'";

void corrupt_middle_block(const std::string& path) {
  sql(path, std::string("UPDATE blocks SET num = ") + kGarbage +
                ", rest = " + kGarbage + " WHERE t0 = " +
                std::to_string(static_cast<int64_t>(kT0) + 600));
}

void corrupt_third_batch(const std::string& path) {
  sql(path, std::string("UPDATE pending SET num = ") + kGarbage +
                ", rest = " + kGarbage +
                " WHERE seq = (SELECT seq FROM pending ORDER BY seq LIMIT 1 "
                "OFFSET 2)");
}

TEST(StoreCorruption, QuerySkipsACorruptBlockAndReportsIt) {
  StoreDir dir;
  std::string path = filled_db(dir);
  corrupt_middle_block(path);
  auto store = open_store(path);
  for (const char* metric : {"gpu.util_pct", "process.used_bytes"}) {
    ReadReport report;
    auto series = store->query(metric, 0, std::nullopt, 0, 1e18, 0, &report);
    ASSERT_EQ(series.size(), 1u) << metric;
    EXPECT_EQ(series[0].points.size(), 1300u) << metric;
    EXPECT_EQ(report.skipped_blocks, 1u) << metric;
    for (const auto& p : series[0].points)
      EXPECT_FALSE(p.t >= kT0 + 600 && p.t < kT0 + 1200) << p.t;
  }
  // A range that misses the bad block skips nothing.
  ReadReport clean;
  store->query("gpu.util_pct", 0, std::nullopt, kT0 + 1300, 1e18, 0, &clean);
  EXPECT_EQ(clean.skipped_blocks, 0u);
}

TEST(StoreCorruption, ExportWritesTheRestAndReportsTheSkip) {
  StoreDir dir;
  std::string path = filled_db(dir);
  corrupt_middle_block(path);
  auto store = open_store(path);
  ReadReport report;
  {
    TraceWriter w(dir.path("out.jsonl"));
    EXPECT_EQ(store->export_trace(0, 1e18, w, &report), 1300u);
  }
  EXPECT_EQ(report.skipped_blocks, 1u);
  auto samples = export_all(*store, dir.path("out2.jsonl"));
  ASSERT_EQ(samples.size(), 1300u);
  EXPECT_EQ(samples.front().t, kT0);
  EXPECT_EQ(samples.back().t, kT0 + 1899);
}

TEST(StoreCorruption, CorruptPendingBatchIsQuarantinedAtOpen) {
  StoreDir dir;
  std::string path = filled_db(dir);
  corrupt_third_batch(path);
  std::unique_ptr<HistoryStore> store;
  ASSERT_NO_THROW(store = open_store(path));
  EXPECT_EQ(store->health().quarantined_total, 1u);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM quarantine"), 1);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM pending"), 9);
  // The other 90 pending samples are still there, and new ones follow.
  store->append(make_sample(kT0 + 1900, 1900));
  store->flush();
  auto samples = export_all(*store, dir.path("out.jsonl"));
  EXPECT_EQ(samples.size(), 1900u - 10u + 1u);
  store.reset();
  // The next open finds nothing more to move aside.
  EXPECT_EQ(open_store(path)->health().quarantined_total, 0u);
}

TEST(StoreCorruption, ReadOnlyOpenSkipsACorruptBatch) {
  StoreDir dir;
  std::string path = filled_db(dir);
  corrupt_third_batch(path);
  StoreOptions o;
  o.path = path;
  o.read_only = true;
  auto store = HistoryStore::open(o);
  ReadReport report;
  TraceWriter w(dir.path("out.jsonl"));
  EXPECT_EQ(store->export_trace(0, 1e18, w, &report), 1890u);
  EXPECT_EQ(report.skipped_blocks, 1u);
}

TEST(StoreCorruption, CheckFindsAndRepairQuarantines) {
  StoreDir dir;
  std::string path = filled_db(dir);
  EXPECT_TRUE(check_store(path).clean());
  corrupt_middle_block(path);
  corrupt_third_batch(path);

  StoreCheck c = check_store(path);
  EXPECT_FALSE(c.clean());
  EXPECT_EQ(c.blocks, 3u);
  EXPECT_EQ(c.batches, 10u);
  ASSERT_EQ(c.corrupt.size(), 2u);
  EXPECT_EQ(c.corrupt[0].table, "blocks");
  EXPECT_EQ(c.corrupt[0].t0, kT0 + 600);
  EXPECT_EQ(c.corrupt[1].table, "pending");
  EXPECT_TRUE(c.integrity_errors.empty());
  // check is read-only: nothing moved.
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks"), 3);

  StoreCheck r = repair_store(path);
  EXPECT_EQ(r.repaired, 2u);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.quarantined_rows, 2);
  EXPECT_TRUE(check_store(path).clean());

  auto store = open_store(path);
  EXPECT_EQ(store->health().quarantined_total, 0u);
  ReadReport report;
  TraceWriter w(dir.path("out.jsonl"));
  EXPECT_EQ(store->export_trace(0, 1e18, w, &report), 1900u - 600u - 10u);
  EXPECT_EQ(report.skipped_blocks, 0u);
}

TEST(StoreCorruption, DownsamplingQuarantinesACorruptBlockAndGoesOn) {
  StoreDir dir;
  std::string path = filled_db(dir);
  corrupt_middle_block(path);
  auto store = open_store(path);
  // A day later every raw block is due for downsampling.
  ASSERT_NO_THROW(store->maintain(kT0 + 2 * 86400));
  EXPECT_EQ(store->health().quarantined_total, 1u);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks WHERE tier = 0"), 0);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM quarantine"), 1);
  ReadReport report;
  auto series =
      store->query("gpu.util_pct", 0, std::nullopt, 0, 1e18, 0, &report);
  EXPECT_EQ(report.skipped_blocks, 0u);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_FALSE(series[0].points.empty());
}

TEST(StoreCorruption, CheckRefusesAForeignFile) {
  StoreDir dir;
  std::string path = dir.path("other.db");
  sql(path, "CREATE TABLE users(name TEXT)");
  try {
    check_store(path);
    ADD_FAILURE() << "no error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not a gpudoctor history database"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace gd
