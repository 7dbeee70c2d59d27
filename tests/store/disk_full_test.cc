// A full disk (SQLITE_FULL from a fault-injecting VFS): the store encodes
// each batch once, keeps the unwritten ones in memory up to its byte bound,
// drops (and counts) only beyond it, and writes the backlog by itself when
// space returns.
#include <gtest/gtest.h>

#include "faulty_vfs.h"
#include "store/block_codec.h"
#include "store_test_util.h"

namespace gd {
namespace {

using testing::export_all;
using testing::FaultyVfs;
using testing::kT0;
using testing::make_sample;
using testing::StoreDir;

class DiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    FaultyVfs::install();
    FaultyVfs::disk_full = false;
  }
  void TearDown() override { FaultyVfs::disk_full = false; }

  std::unique_ptr<HistoryStore> open(size_t max_pending_bytes) {
    StoreOptions o;
    o.path = dir_.path("h.db");
    o.batch_samples = 10;
    o.max_pending_bytes = max_pending_bytes;
    o.retry_min_s = 0;  // retry on every batch: the test controls time
    o.retry_max_s = 0;
    return HistoryStore::open(o);
  }

  StoreDir dir_;
};

TEST_F(DiskFull, BacklogIsEncodedOnceKeptAndWrittenWhenSpaceReturns) {
  auto store = open(size_t{32} << 20);
  int i = 0;
  for (; i < 100; ++i) store->append(make_sample(kT0 + i, i));
  EXPECT_TRUE(store->health().writable);

  FaultyVfs::disk_full = true;
  const uint64_t encodes_before = store::encode_block_calls();
  // 1500 samples: two block seals while full.
  for (; i < 1600; ++i) ASSERT_NO_THROW(store->append(make_sample(kT0 + i, i)));
  const uint64_t encodes = store::encode_block_calls() - encodes_before;
  EXPECT_GT(FaultyVfs::failed_writes.load(), 0);

  StoreHealth h = store->health();
  EXPECT_FALSE(h.writable);
  EXPECT_GT(h.write_errors_total, 0u);
  EXPECT_GT(h.pending_bytes, 0u);
  EXPECT_LE(h.pending_bytes, size_t{32} << 20);
  EXPECT_EQ(h.dropped_samples_total, 0u);
  EXPECT_NE(h.last_error.find("full"), std::string::npos) << h.last_error;
  // One encode per batch of 10 plus one per sealed block: no re-encoding
  // of the backlog per sample.
  EXPECT_LE(encodes, 1500u / 10u + 2u);
  // Reads see the samples waiting in memory.
  auto series = store->query("gpu.util_pct", 0, std::nullopt, 0, 1e18, 0);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].points.size(), 1600u);
  EXPECT_EQ(export_all(*store, dir_.path("during.jsonl")).size(), 1600u);

  FaultyVfs::disk_full = false;
  for (; i < 1610; ++i) store->append(make_sample(kT0 + i, i));
  h = store->health();
  EXPECT_TRUE(h.writable);
  EXPECT_EQ(h.pending_bytes, 0u);

  store.reset();  // close; reopen reads only what is on disk
  auto reopened = open(size_t{32} << 20);
  auto samples = export_all(*reopened, dir_.path("out.jsonl"));
  ASSERT_EQ(samples.size(), 1610u);
  for (size_t k = 0; k < samples.size(); ++k)
    ASSERT_EQ(samples[k].t, kT0 + static_cast<double>(k));
}

TEST_F(DiskFull, HeaderIsWrittenWhenSpaceReturns) {
  auto store = open(size_t{32} << 20);
  TraceHeader header;
  header.host.hostname = "node-7";
  FaultyVfs::disk_full = true;
  ASSERT_NO_THROW(store->set_header(header));  // serve starts anyway
  EXPECT_FALSE(store->health().writable);
  FaultyVfs::disk_full = false;
  for (int i = 0; i < 10; ++i) store->append(make_sample(kT0 + i, i));
  EXPECT_TRUE(store->health().writable);
  TraceHeader read;
  export_all(*store, dir_.path("out.jsonl"), 0, 1e18, &read);
  EXPECT_EQ(read.host.hostname, "node-7");
}

TEST_F(DiskFull, BeyondTheBoundTheOldestAreDroppedAndCounted) {
  const size_t bound = 24 * 1024;
  auto store = open(bound);
  FaultyVfs::disk_full = true;
  const int n = 6000;  // ten 600-sample blocks of 8 GPUs: well over 24 KiB
  for (int i = 0; i < n; ++i) {
    store->append(make_sample(kT0 + i, i, 8));
    ASSERT_LE(store->health().pending_bytes, bound);
  }
  StoreHealth h = store->health();
  EXPECT_GT(h.dropped_samples_total, 0u) << h.pending_bytes;
  EXPECT_EQ(h.dropped_samples_total % 600, 0u);  // whole blocks, oldest first

  FaultyVfs::disk_full = false;
  store->flush();
  EXPECT_TRUE(store->health().writable);
  auto samples = export_all(*store, dir_.path("out.jsonl"));
  EXPECT_EQ(samples.size(), n - h.dropped_samples_total);
  ASSERT_FALSE(samples.empty());
  // What is kept is the newest, without gaps.
  EXPECT_EQ(samples.back().t, kT0 + n - 1);
  EXPECT_EQ(samples.front().t,
            kT0 + static_cast<double>(h.dropped_samples_total));
}

}  // namespace
}  // namespace gd
