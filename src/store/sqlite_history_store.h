// HistoryStore on SQLite (history_store.h): the class, internal to gd_store.
// Its member functions are defined by topic:
//   sqlite_history_store.cc  opening, the stored header, health
//   history_schema.cc        the tables, the file check, version migration
//   history_writer.cc        append, the write queue, sealing, pending batches
//   tier_merge.cc            maintain(): retention and the minute averages
//   alert_history.cc         the alert history
//   history_queries.cc       query, query_many, scan, export_trace
//
// Tables:
//   meta(key, value)         -- 'header': the node's TraceHeader as JSON
//   blocks(tier, win, t0, t1, n, num, rest)
//                            -- sealed blocks (block_codec.h): tier 0 = raw
//                               samples of one kRawBlockSpanS window, tier 1
//                               = per-minute averages of one hour
//   pending(seq, num, rest)  -- the open raw block, one row per flushed batch
//                               (same codec), so a crash loses at most the
//                               unflushed batch; sealing the block replaces
//                               these rows by one block row in one transaction.
//   quarantine(...)          -- corrupt blocks/batches moved aside
//                               (quarantine.h)
//   alerts(...)              -- alert history (version 2): one row per alert,
//                               updated when it resolves
//
// Writes go through a WriteQueue: a batch is encoded once; when the write
// fails (disk full) it waits in memory, bounded in bytes, and is retried
// with backoff, oldest first, so the DB never sees a batch out of order.
//
// Concurrency: the writer (append/flush/maintain) and the readers (query,
// export) use separate connections; WAL lets a reader work on a snapshot
// while the writer commits. The samples of the open block are also kept in
// memory (open_), so a query sees even the not yet flushed ones.
#pragma once

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/history_store.h"
#include "store/sqlite_db.h"
#include "store/write_queue.h"

namespace gd::store {

// Alert rows waiting for a writable disk, at most (older ones dropped).
inline constexpr size_t kMaxPendingAlerts = 1024;
// Alert texts are findings' (they quote process names): capped like every
// string kept from the host.
inline constexpr size_t kMaxAlertTextBytes = 4096;
// Sealed blocks are written once and read many times: spend CPU on size.
inline constexpr int kSealZstdLevel = 9;
// Pending batches are rewritten into a block within minutes: be quick.
inline constexpr int kBatchZstdLevel = 3;
// Raw blocks downsampled per maintain() call: each holds the writer lock
// for a few ms; a backlog (daemon was down) drains 2 h of data per call
// instead of stalling the sampling loop for seconds.
inline constexpr int kMaxBlocksPerMaintain = 12;
// Another process (export, a second reader) may hold a lock briefly.
inline constexpr int kBusyTimeoutMs = 5000;

// The start of the window of length `span` that holds `t`.
inline double window_of(double t, double span) {
  return std::floor(t / span) * span;
}

class SqliteHistoryStore final : public HistoryStore {
 public:
  explicit SqliteHistoryStore(const StoreOptions& o);
  ~SqliteHistoryStore() override;

  void set_header(const TraceHeader& h) override;
  void append(const Sample& s) override;
  // Tries the queued writes now, backoff or not (shutdown); throws when they
  // still fail, naming what is lost.
  void flush() override;
  void maintain(double now) override;

  std::vector<HistorySeries> query(const std::string& metric_name,
                                   std::optional<int> gpu,
                                   std::optional<int> pid, double since,
                                   double until, double step,
                                   ReadReport* report) const override;
  std::vector<std::vector<HistorySeries>> query_many(
      const std::vector<std::string>& names, std::optional<int> gpu,
      std::optional<int> pid, double since, double until, double step,
      ReadReport* report) const override;
  std::vector<std::string> metrics() const override;
  size_t export_trace(double since, double until, TraceWriter& out,
                      ReadReport* report) const override;
  size_t scan(double since, double until,
              const std::function<bool(Sample&)>& fn,
              ReadReport* report) const override;
  size_t scan_fields(
      double since, double until, const ScanFields& fields,
      const std::function<bool(const Sample&, bool same_processes)>& fn,
      ReadReport* report) const override;
  TraceHeader header() const override;

  void record_alert(const StoredAlert& a) override;
  std::vector<StoredAlert> alerts(double since, double until) const override;

  StoreHealth health() const override;

 private:
  class ReadSnapshot;  // history_queries.cc

  // history_schema.cc
  Db open_checked(bool read_only);
  static void create(Db& db);
  void migrate(Db& db, int64_t version);

  // history_writer.cc
  void load_pending();
  void flush_locked();
  void seal_locked();
  void drain_locked();
  void write_locked(const PendingWrite& w);

  // alert_history.cc
  void write_alert_locked(const StoredAlert& a);
  void close_orphan_alerts();

  // tier_merge.cc
  void trim_tier1_locked(double cutoff);
  void merge_into_tier1(double win, std::vector<Sample> added);

  // history_queries.cc
  std::vector<Sample> queued_samples(double since, double until) const;
  // A sample, and whether its host processes are those of the sample
  // before it (scan_fields). SampleRef is `Sample&` for scan (the sample
  // is the scan's own: fn may move from it) and `const Sample&` for
  // scan_fields (a sample the decoder reuses).
  template <typename SampleRef>
  using SampleFn = std::function<bool(SampleRef, bool same_processes)>;
  // A decoded block: passes its samples to `each` until it returns false.
  template <typename SampleRef>
  using BlockPass = std::function<void(const SampleFn<SampleRef>& each)>;
  // Decodes one block's (num, rest); throws when it does not decode.
  template <typename SampleRef>
  using BlockReader = std::function<BlockPass<SampleRef>(
      std::string_view num, std::string_view rest)>;
  // scan and scan_fields: the blocks through `read`, then the samples still
  // in memory. With `read_ahead`, each block is decoded on another thread
  // while the one before is passed. Defined (and instantiated) in
  // history_queries.cc.
  template <typename SampleRef>
  size_t scan_blocks(double since, double until,
                     const BlockReader<SampleRef>& read, bool read_ahead,
                     const SampleFn<SampleRef>& fn, ReadReport* report) const;

  // sqlite_history_store.cc
  void require_writable() const;
  // nullopt when the bytes do not decode (a corrupted row).
  static std::optional<std::vector<Sample>> try_decode(std::string_view num,
                                                       std::string_view rest);
  int64_t meta_int(const char* key) const;
  TraceHeader read_header() const;

  StoreOptions opt_;
  // Writer side: connection, statements and the open block.
  mutable std::mutex mu_;
  Db wdb_;
  Stmt ins_pending_, del_pending_, ins_block_, set_meta_, upsert_alert_;
  std::deque<StoredAlert> pending_alerts_;  // not yet written (disk full)
  int64_t rolled_id_ = 0;     // newest raw block rolled up into tier 1
  std::vector<Sample> open_;  // flushed to `pending` except the last unflushed_
  double open_window_ = 0;
  size_t unflushed_ = 0;
  double last_t_ = -std::numeric_limits<double>::infinity();
  WriteQueue queue_;
  std::optional<std::string> header_json_;  // set_header() not yet written
  bool writable_ = true;
  uint64_t write_errors_ = 0;
  uint64_t quarantined_ = 0;
  std::string last_error_;
  double backoff_s_ = 0;
  std::chrono::steady_clock::time_point next_retry_{};
  size_t skipped_pending_ = 0;  // read-only open: corrupt batches not loaded
  // Reader side (query, export): its own connection and statements.
  mutable std::mutex rmu_;
  mutable Db rdb_;
  mutable Stmt sel_num_, sel_all_, sel_meta_;
};

}  // namespace gd::store
