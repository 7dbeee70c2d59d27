// HistoryStore on SQLite (history_store.h).
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
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <span>

#include "store/block_codec.h"
#include "store/downsample.h"
#include "store/history_store.h"
#include "store/numeric_fields.h"
#include "store/quarantine.h"
#include "store/schema_version.h"
#include "store/sqlite_db.h"
#include "store/write_queue.h"

namespace gd {

HistoryStore::~HistoryStore() = default;

namespace {

using store::Cell;
using store::Db;
using store::Stmt;
using store::Transaction;

using store::kApplicationId;
using store::kSchemaVersion;  // store/schema_version.h
// Alert rows waiting for a writable disk, at most (older ones dropped).
constexpr size_t kMaxPendingAlerts = 1024;
// Alert texts are findings' (they quote process names): capped like every
// string kept from the host.
constexpr size_t kMaxAlertTextBytes = 4096;
// Sealed blocks are written once and read many times: spend CPU on size.
constexpr int kSealZstdLevel = 9;
// Pending batches are rewritten into a block within minutes: be quick.
constexpr int kBatchZstdLevel = 3;
// A raw block is sealed at kMaxBlockSamples even inside its window:
// sub-second intervals would otherwise make one block very large.
using store::kMaxBlockSamples;
// Raw blocks downsampled per maintain() call: each holds the writer lock
// for a few ms; a backlog (daemon was down) drains 2 h of data per call
// instead of stalling the sampling loop for seconds.
constexpr int kMaxBlocksPerMaintain = 12;
// Another process (export, a second reader) may hold a lock briefly.
constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE blocks(
  id INTEGER PRIMARY KEY,
  tier INTEGER NOT NULL,
  win REAL NOT NULL,
  t0 REAL NOT NULL,
  t1 REAL NOT NULL,
  n INTEGER NOT NULL,
  num BLOB NOT NULL,
  rest BLOB NOT NULL);
CREATE INDEX blocks_by_time ON blocks(t0);
CREATE INDEX blocks_by_tier ON blocks(tier, win);
CREATE TABLE pending(seq INTEGER PRIMARY KEY, num BLOB NOT NULL, rest BLOB NOT NULL);
)sql";

// Version 2: the alert history.
constexpr const char* kAlertsSchema = R"sql(
CREATE TABLE IF NOT EXISTS alerts(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  started_at REAL NOT NULL,
  fired_at REAL NOT NULL,
  resolved_at REAL,
  ended TEXT NOT NULL DEFAULT '',
  finding TEXT NOT NULL,
  severity TEXT NOT NULL,
  gpus TEXT NOT NULL,
  title TEXT NOT NULL,
  evidence TEXT NOT NULL,
  action TEXT NOT NULL,
  UNIQUE(key, started_at));
CREATE INDEX IF NOT EXISTS alerts_by_time ON alerts(started_at);
)sql";

std::string capped(const std::string& s) {
  if (s.size() <= kMaxAlertTextBytes) return s;
  size_t n = kMaxAlertTextBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

std::string gpus_text(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) {
    if (!out.empty()) out += ',';
    out += std::to_string(g);
  }
  return out;
}

std::vector<int> gpus_of(std::string_view text) {
  std::vector<int> out;
  size_t i = 0;
  while (i < text.size()) {
    int v = 0;
    bool digits = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && v < 100000) {
      v = v * 10 + (text[i++] - '0');
      digits = true;
    }
    if (digits) out.push_back(v);
    while (i < text.size() && (text[i] < '0' || text[i] > '9')) ++i;
  }
  return out;
}

double window_of(double t, double span) { return std::floor(t / span) * span; }

int64_t query_int(Db& db, const char* sql) {
  Stmt st(db, sql);
  int64_t v = 0;
  if (st.step()) v = st.col_int(0);
  st.reset();
  return v;
}

// Parsed metric name of query().
struct Metric {
  enum Kind { kGpu, kHost, kProcessUsed, kProcessCpu } kind;
  int field = -1;
};

// Collects points per (gpu, pid).
struct SeriesSet {
  std::map<std::pair<int64_t, int64_t>, HistorySeries> by_key;
  void add(std::optional<int> gpu, std::optional<int> pid, double t, double v) {
    auto key = std::make_pair(gpu ? *gpu : -1LL,
                              pid ? static_cast<int64_t>(*pid) : -1LL);
    auto& s = by_key[key];
    s.gpu = gpu;
    s.pid = pid;
    s.points.push_back({t, v});
  }
};

class SqliteHistoryStore final : public HistoryStore {
 public:
  explicit SqliteHistoryStore(const StoreOptions& o)
      : opt_(o), queue_(o.max_pending_bytes) {
    if (opt_.batch_samples == 0) opt_.batch_samples = 1;
    rdb_ = open_checked(opt_.read_only);
    if (!opt_.read_only) {
      wdb_ = open_checked(false);
      store::ensure_quarantine_table(wdb_);
      ins_pending_ =
          Stmt(wdb_, "INSERT INTO pending(num, rest) VALUES(?1, ?2)");
      del_pending_ = Stmt(wdb_, "DELETE FROM pending");
      ins_block_ = Stmt(wdb_,
                        "INSERT INTO blocks(tier, win, t0, t1, n, num, rest) "
                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
      set_meta_ =
          Stmt(wdb_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
      upsert_alert_ = Stmt(
          wdb_,
          "INSERT INTO alerts(key, started_at, fired_at, resolved_at, ended, "
          "finding, severity, gpus, title, evidence, action) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
          "ON CONFLICT(key, started_at) DO UPDATE SET fired_at = "
          "excluded.fired_at, resolved_at = excluded.resolved_at, ended = "
          "excluded.ended, title = excluded.title, evidence = "
          "excluded.evidence, action = excluded.action");
    }
    sel_num_ = Stmt(rdb_,
                    "SELECT t0, num, id, tier FROM blocks WHERE t1 >= ?1 AND "
                    "t0 <= ?2 "
                    "ORDER BY t0, tier DESC");
    sel_all_ =
        Stmt(rdb_,
             "SELECT t0, num, rest, id, tier FROM blocks WHERE t1 >= ?1 AND "
             "t0 <= ?2 ORDER BY t0, tier DESC");
    sel_meta_ = Stmt(rdb_, "SELECT value FROM meta WHERE key = ?1");
    load_pending();
    if (!opt_.read_only) close_orphan_alerts();
    rolled_id_ = meta_int("rolled_id");
  }

  ~SqliteHistoryStore() override {
    try {
      flush();
    } catch (...) {
      // Nothing left to report to: the caller is gone. At most the
      // unflushed batch is lost, as after a crash.
    }
  }

  void set_header(const TraceHeader& h) override {
    std::lock_guard lock(mu_);
    require_writable();
    // Written with the queue: a full disk at startup must not stop serve.
    header_json_ = header_to_json(h);
    next_retry_ = {};
    drain_locked();
  }

  void append(const Sample& s) override {
    std::lock_guard lock(mu_);
    require_writable();
    // The trace format needs non-decreasing t; a sample from a clock that
    // stepped back is dropped rather than breaking every later export.
    if (!std::isfinite(s.t) || s.t < last_t_) return;
    if (!open_.empty() &&
        (window_of(s.t, store::kRawBlockSpanS) != open_window_ ||
         open_.size() >= kMaxBlockSamples))
      seal_locked();
    if (open_.empty()) open_window_ = window_of(s.t, store::kRawBlockSpanS);
    open_.push_back(s);
    ++unflushed_;
    last_t_ = s.t;
    if (unflushed_ >= opt_.batch_samples) flush_locked();
  }

  // Tries the queued writes now, backoff or not (shutdown); throws when they
  // still fail, naming what is lost.
  void flush() override {
    std::lock_guard lock(mu_);
    if (opt_.read_only) return;
    next_retry_ = {};
    flush_locked();
    if (!queue_.empty())
      throw StoreError(last_error_ + " (" + std::to_string(queue_.bytes()) +
                       " bytes of history not written)");
  }

  void maintain(double now) override {
    std::lock_guard lock(mu_);
    if (opt_.read_only) return;
    // An open block whose window has passed (the sampling loop stopped or
    // paused) is sealed so that it, too, ages into tier 1 and retention.
    if (!open_.empty() && now >= open_window_ + store::kRawBlockSpanS)
      seal_locked();
    // While writes fail, retention and downsampling wait too.
    if (!queue_.empty()) return;
    {
      Transaction tx(wdb_);
      Stmt del(wdb_, "DELETE FROM blocks WHERE t1 < ?1");
      del.bind(1, now - opt_.retention_s).run();
      Stmt del_alerts(wdb_,
                      "DELETE FROM alerts WHERE resolved_at IS NOT NULL AND "
                      "resolved_at < ?1");
      del_alerts.bind(1, now - opt_.retention_s).run();
      trim_tier1_locked(now - opt_.retention_s);
      tx.commit();
    }
    // Every sealed raw block is rolled up into minute averages (tier 1)
    // soon after it is sealed, not only when it ages out: a day's chart at
    // one point a minute then reads 24 small blocks instead of 144 raw
    // ones. The raw block stays for kRawKeepS; 'rolled_id' in meta is the
    // newest raw block already rolled up.
    struct Raw {
      int64_t id;
      std::string num, rest;
    };
    std::vector<Raw> raws;
    {
      Stmt sel(wdb_,
               "SELECT id, num, rest FROM blocks WHERE tier = 0 AND id > ?1 "
               "ORDER BY id LIMIT ?2");
      sel.bind(1, rolled_id_).bind(2, int64_t{kMaxBlocksPerMaintain});
      while (sel.step())
        raws.push_back({sel.col_int(0), std::string(sel.col_blob(1)),
                        std::string(sel.col_blob(2))});
    }
    for (const auto& raw : raws) {
      auto samples = try_decode(raw.num, raw.rest);
      Transaction tx(wdb_);
      if (!samples) {
        store::quarantine_row(wdb_, "blocks", raw.id,
                              "block does not decode (seen by downsampling)");
        ++quarantined_;
      } else {
        auto averaged = store::downsample(*samples, store::kTier1StepS);
        size_t begin = 0;
        while (begin < averaged.size()) {
          double win = window_of(averaged[begin].t, store::kTier1BlockSpanS);
          size_t end = begin;
          while (end < averaged.size() &&
                 window_of(averaged[end].t, store::kTier1BlockSpanS) == win)
            ++end;
          merge_into_tier1(win, std::vector<Sample>(averaged.begin() + begin,
                                                    averaged.begin() + end));
          begin = end;
        }
      }
      set_meta_.bind_text(1, "rolled_id")
          .bind_text(2, std::to_string(raw.id))
          .run();
      tx.commit();
      rolled_id_ = raw.id;
    }
    // Raw blocks past kRawKeepS go once their minutes are in tier 1.
    {
      Stmt del(wdb_,
               "DELETE FROM blocks WHERE tier = 0 AND t1 < ?1 AND id <= ?2");
      del.bind(1, now - store::kRawKeepS).bind(2, rolled_id_).run();
    }
  }

  std::vector<HistorySeries> query(const std::string& metric_name,
                                   std::optional<int> gpu,
                                   std::optional<int> pid, double since,
                                   double until, double step,
                                   ReadReport* report) const override {
    return query_many({metric_name}, gpu, pid, since, until, step, report)
        .front();
  }

  std::vector<std::vector<HistorySeries>> query_many(
      const std::vector<std::string>& names, std::optional<int> gpu,
      std::optional<int> pid, double since, double until, double step,
      ReadReport* report) const override {
    std::vector<Metric> ms;
    for (const auto& n : names) ms.push_back(parse_metric(n));
    if (!(step >= 0) || !std::isfinite(step))
      throw StoreError(opt_.path + ": step must be a number >= 0");
    std::vector<SeriesSet> sets(ms.size());
    std::vector<int> gpu_keep, host_keep;
    bool need_samples = false;  // a process metric: whole samples decoded
    for (const auto& m : ms) {
      if (m.kind == Metric::kGpu) gpu_keep.push_back(m.field);
      if (m.kind == Metric::kHost) host_keep.push_back(m.field);
      if (m.kind == Metric::kProcessUsed || m.kind == Metric::kProcessCpu)
        need_samples = true;
    }
    auto add_sample = [&](const Sample& s) {
      for (size_t i = 0; i < ms.size(); ++i)
        add_points(sets[i], ms[i], gpu, pid, s);
    };
    size_t skipped = skipped_pending_;
    std::lock_guard rlock(rmu_);
    ReadSnapshot snap(*this, [&] {
      for (const auto& s : queued_samples(since, until)) add_sample(s);
      for (const auto& s : open_)
        if (s.t >= since && s.t <= until) add_sample(s);
    });
    // Format-2 blocks answer process metrics from their process columns;
    // older blocks are decoded whole.
    const TierView tiers = tier_view(rdb_);
    const bool minute =
        step >= store::kTier1StepS && std::fmod(step, store::kTier1StepS) == 0;
    Stmt& sel = need_samples ? sel_all_ : sel_num_;
    const int id_col = need_samples ? 3 : 2;
    sel.reset();
    sel.bind(1, since).bind(2, until);
    while (sel.step()) {
      double hi = until;
      if (!block_range(tiers, minute, sel.col_int(id_col),
                       sel.col_int(id_col + 1), until, hi) ||
          hi < since)
        continue;
      store::NumericColumns cols;
      try {
        cols = store::decode_numeric_fields(sel.col_blob(1), gpu_keep,
                                            host_keep, need_samples);
      } catch (const std::exception&) {  // CodecError
        ++skipped;  // `db check` names it; the other blocks still answer
        continue;
      }
      for (size_t i = 0; i < ms.size(); ++i)
        add_points(sets[i], ms[i], gpu, cols, since, hi);
      if (!need_samples) continue;
      if (cols.has_processes) {
        for (size_t i = 0; i < ms.size(); ++i)
          add_process_points(sets[i], ms[i], gpu, pid, cols, since, hi);
        continue;
      }
      auto samples = try_decode(sel.col_blob(1), sel.col_blob(2));
      if (!samples) ++skipped;
      for (const auto& s : samples.value_or(std::vector<Sample>{})) {
        if (s.t < since || s.t > hi) continue;
        for (size_t i = 0; i < ms.size(); ++i)
          if (ms[i].kind == Metric::kProcessUsed ||
              ms[i].kind == Metric::kProcessCpu)
            add_points(sets[i], ms[i], gpu, pid, s);
      }
    }
    snap.end();
    if (report) report->skipped_blocks += skipped;

    std::vector<std::vector<HistorySeries>> out(ms.size());
    for (size_t i = 0; i < ms.size(); ++i)
      for (auto& [key, series] : sets[i].by_key) {
        std::stable_sort(
            series.points.begin(), series.points.end(),
            [](const auto& a, const auto& b) { return a.t < b.t; });
        if (step > 0) series.points = bucket(series.points, step);
        out[i].push_back(std::move(series));
      }
    return out;
  }

  std::vector<std::string> metrics() const override {
    std::vector<std::string> out;
    for (const auto& f : store::gpu_fields())
      out.push_back(std::string("gpu.") + f.name);
    for (const auto& f : store::host_fields())
      out.push_back(std::string("host.") + f.name);
    out.push_back("process.used_bytes");
    out.push_back("process.cpu_pct");
    return out;
  }

  size_t export_trace(double since, double until, TraceWriter& out,
                      ReadReport* report) const override {
    out.write_header(header());
    return scan(
        since, until,
        [&](const Sample& s) {
          out.write_sample(s);
          return true;
        },
        report);
  }

  size_t scan(double since, double until,
              const std::function<bool(const Sample&)>& fn,
              ReadReport* report) const override {
    size_t skipped = skipped_pending_;
    std::vector<Sample> tail;
    Db db(opt_.path, true);
    sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
    db.exec("BEGIN");
    struct Rollback {
      Db& db;
      bool done = false;
      ~Rollback() {
        if (done) return;
        try {
          db.exec("ROLLBACK");
        } catch (...) {
          // Read-only transaction: nothing to undo.
        }
      }
    } rollback{db};
    {
      // The snapshot and the in-memory samples are taken together (see
      // ReadSnapshot): a block sealed meanwhile is seen once.
      std::lock_guard lock(mu_);
      Stmt first(db, "SELECT count(*) FROM meta");
      first.run();
      // Blocks waiting for the disk come after every written one.
      tail = queued_samples(since, until);
      for (const auto& s : open_)
        if (s.t >= since && s.t <= until) tail.push_back(s);
    }
    size_t passed = 0;
    bool go_on = true;
    double last = -std::numeric_limits<double>::infinity();
    auto pass = [&](const Sample& s) {
      // Blocks are ordered by their first sample; never pass time going
      // backwards, which a trace reader would reject.
      if (!go_on || s.t < since || s.t > until || s.t < last) return;
      last = s.t;
      ++passed;
      go_on = fn(s);
    };
    const TierView tiers = tier_view(db);
    Stmt sel(db,
             "SELECT t0, num, rest, id, tier FROM blocks WHERE t1 >= ?1 AND "
             "t0 <= ?2 ORDER BY t0, tier DESC");
    sel.bind(1, since).bind(2, until);
    while (go_on && sel.step()) {
      double hi = until;
      block_range(tiers, false, sel.col_int(3), sel.col_int(4), until, hi);
      if (hi < since) continue;
      auto samples = try_decode(sel.col_blob(1), sel.col_blob(2));
      if (!samples) ++skipped;
      for (const auto& s : samples.value_or(std::vector<Sample>{}))
        if (s.t <= hi) pass(s);
    }
    sel.reset();
    db.exec("COMMIT");
    rollback.done = true;
    for (const auto& s : tail) pass(s);
    if (report) report->skipped_blocks += skipped;
    return passed;
  }

  TraceHeader header() const override {
    std::lock_guard rlock(rmu_);
    return read_header();
  }

  void record_alert(const StoredAlert& a) override {
    std::lock_guard lock(mu_);
    require_writable();
    StoredAlert c = a;
    c.title = capped(a.title);
    c.evidence = capped(a.evidence);
    c.action = capped(a.action);
    c.key = capped(a.key);
    pending_alerts_.push_back(std::move(c));
    while (pending_alerts_.size() > kMaxPendingAlerts)
      pending_alerts_.pop_front();
    next_retry_ = {};
    drain_locked();
  }

  std::vector<StoredAlert> alerts(double since, double until) const override {
    std::lock_guard rlock(rmu_);
    std::vector<StoredAlert> out;
    // Older files opened read-only have no alerts table: no history.
    Stmt has(rdb_,
             "SELECT count(*) FROM sqlite_master WHERE name = 'alerts' AND "
             "type = 'table'");
    if (!has.step() || has.col_int(0) == 0) return out;
    has.reset();
    Stmt sel(rdb_,
             "SELECT key, started_at, fired_at, coalesce(resolved_at, 0), "
             "ended, finding, severity, gpus, title, evidence, action FROM "
             "alerts WHERE started_at <= ?2 AND coalesce(resolved_at, 1e300) "
             ">= ?1 ORDER BY started_at");
    sel.bind(1, since).bind(2, until);
    while (sel.step()) {
      StoredAlert a;
      a.key = std::string(sel.col_blob(0));
      a.started_at = sel.col_double(1);
      a.fired_at = sel.col_double(2);
      a.resolved_at = sel.col_double(3);
      a.ended = std::string(sel.col_blob(4));
      a.id = std::string(sel.col_blob(5));
      a.severity = std::string(sel.col_blob(6));
      a.gpus = gpus_of(sel.col_blob(7));
      a.title = std::string(sel.col_blob(8));
      a.evidence = std::string(sel.col_blob(9));
      a.action = std::string(sel.col_blob(10));
      out.push_back(std::move(a));
    }
    // Alerts still waiting for the disk are history too.
    std::lock_guard lock(mu_);
    for (const auto& a : pending_alerts_)
      if (a.started_at <= until &&
          (a.resolved_at == 0 || a.resolved_at >= since))
        out.push_back(a);
    return out;
  }

  StoreHealth health() const override {
    std::lock_guard lock(mu_);
    StoreHealth h;
    h.writable = writable_;
    h.write_errors_total = write_errors_;
    h.pending_bytes = queue_.bytes();
    h.dropped_samples_total = queue_.dropped_samples();
    h.quarantined_total = quarantined_;
    h.last_error = last_error_;
    return h;
  }

 private:
  // A read transaction on rdb_ whose snapshot matches open_: both are taken
  // under the writer lock, so a block sealed meanwhile is seen either in the
  // DB or in open_, never in both or neither.
  class ReadSnapshot {
   public:
    template <typename Fn>
    ReadSnapshot(const SqliteHistoryStore& s, Fn&& with_open) : s_(s) {
      s_.rdb_.exec("BEGIN");
      try {
        std::lock_guard lock(s_.mu_);
        // The snapshot starts at the first read, not at BEGIN.
        Stmt first(s_.rdb_, "SELECT count(*) FROM meta");
        first.run();
        with_open();
      } catch (...) {
        s_.rdb_.exec("ROLLBACK");
        throw;
      }
    }
    ~ReadSnapshot() {
      if (active_) {
        // An exception left a statement mid-way: stop it so the
        // transaction can end and the statement be reused.
        s_.sel_num_.reset();
        s_.sel_all_.reset();
        s_.sel_meta_.reset();
        try {
          s_.rdb_.exec("ROLLBACK");
        } catch (...) {
          // Read-only transaction: nothing to undo.
        }
      }
    }
    void end() {
      active_ = false;
      s_.rdb_.exec("COMMIT");
    }

   private:
    const SqliteHistoryStore& s_;
    bool active_ = true;
  };

  Db open_checked(bool read_only) {
    Db db(opt_.path, read_only);
    sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
    // Reading the header page is where a corrupted or foreign file shows.
    int64_t app_id = 0, version = 0, tables = 0;
    try {
      app_id = query_int(db, "PRAGMA application_id");
      version = query_int(db, "PRAGMA user_version");
      tables = query_int(db, "SELECT count(*) FROM sqlite_master");
    } catch (const StoreError& e) {
      throw StoreError(opt_.path + ": not a gpudoctor history database (" +
                       sqlite3_errmsg(db.handle()) + ")");
    }
    if (app_id == kApplicationId) {
      store::check_schema_version(opt_.path, version);
      if (version < kSchemaVersion && !read_only) migrate(db, version);
    } else if (app_id == 0 && tables == 0 && !read_only) {
      create(db);
    } else {
      throw StoreError(opt_.path + ": not a gpudoctor history database" +
                       std::string(tables == 0 ? " (empty)" : ""));
    }
    if (!read_only) {
      db.exec("PRAGMA journal_mode=WAL");
      // WAL + NORMAL: a commit is durable against process crashes (the WAL
      // is written before COMMIT returns), only an OS crash or power loss
      // may roll back the last commits -- fine for monitoring history.
      db.exec("PRAGMA synchronous=NORMAL");
    }
    return db;
  }

  static void create(Db& db) {
    Transaction tx(db);
    db.exec(kSchema);
    db.exec(kAlertsSchema);
    db.exec("PRAGMA application_id=" + std::to_string(kApplicationId));
    db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
    tx.commit();
  }

  // Upgrades an older schema in place, one version at a time, each step
  // in one transaction.
  void migrate(Db& db, int64_t version) {
    if (version < 1)
      throw StoreError(opt_.path + ": history schema version " +
                       std::to_string(version) + " cannot be upgraded");
    if (version == 1) {  // 1 -> 2: the alert history
      Transaction tx(db);
      db.exec(kAlertsSchema);
      db.exec("PRAGMA user_version=2");
      tx.commit();
    }
  }

  // A corrupt batch must not keep the daemon from starting: it is moved to
  // quarantine (or, opened read-only, skipped and reported by reads).
  void load_pending() {
    std::vector<int64_t> bad;
    {
      Stmt sel(rdb_, "SELECT seq, num, rest FROM pending ORDER BY seq");
      while (sel.step()) {
        auto samples = try_decode(sel.col_blob(1), sel.col_blob(2));
        if (!samples) {
          bad.push_back(sel.col_int(0));
          continue;
        }
        for (auto& s : *samples)
          if (open_.empty() || s.t >= open_.back().t)
            open_.push_back(std::move(s));
      }
    }
    if (opt_.read_only) {
      skipped_pending_ = bad.size();
    } else if (!bad.empty()) {
      Transaction tx(wdb_);
      for (int64_t seq : bad)
        store::quarantine_row(wdb_, "pending", seq,
                              "pending batch does not decode");
      tx.commit();
      quarantined_ += bad.size();
    }
    if (!open_.empty()) {
      open_window_ = window_of(open_.front().t, store::kRawBlockSpanS);
      last_t_ = open_.back().t;
    }
    // New samples must not go before what is already stored.
    Stmt last(rdb_, "SELECT coalesce(max(t1), -1e300) FROM blocks");
    if (last.step()) last_t_ = std::max(last_t_, last.col_double(0));
    last.reset();
  }

  void require_writable() const {
    if (opt_.read_only) throw StoreError(opt_.path + ": opened read-only");
  }

  // Encodes the unflushed samples once into the queue, then writes.
  void flush_locked() {
    if (unflushed_ > 0) {
      auto tail = std::span<const Sample>(open_).last(unflushed_);
      store::PendingWrite w;
      w.t0 = tail.front().t;
      w.t1 = tail.back().t;
      w.samples = tail.size();
      w.enc = store::encode_block(tail, kBatchZstdLevel);
      queue_.push(std::move(w));
      unflushed_ = 0;
    }
    drain_locked();
  }

  void seal_locked() {
    if (open_.empty()) return;
    queue_.drop_trailing_batches();
    store::PendingWrite w;
    w.is_block = true;
    w.win = open_window_;
    w.t0 = open_.front().t;
    w.t1 = open_.back().t;
    w.samples = open_.size();
    w.enc = store::encode_block(open_, kSealZstdLevel);
    queue_.push(std::move(w));
    open_.clear();
    unflushed_ = 0;
    drain_locked();
  }

  // Writes the queue oldest first; on failure keeps the rest and retries
  // after a backoff (no write attempt, so no CPU, before then).
  void drain_locked() {
    const auto now = std::chrono::steady_clock::now();
    if ((queue_.empty() && !header_json_ && pending_alerts_.empty()) ||
        now < next_retry_)
      return;
    try {
      if (header_json_) {
        set_meta_.bind_text(1, "header").bind_text(2, *header_json_).run();
        header_json_.reset();
      }
      while (!pending_alerts_.empty()) {
        write_alert_locked(pending_alerts_.front());
        pending_alerts_.pop_front();
      }
      while (!queue_.empty()) {
        write_locked(queue_.front());
        queue_.pop_front();
      }
      writable_ = true;
      backoff_s_ = 0;
    } catch (const StoreError& e) {
      ++write_errors_;
      writable_ = false;
      last_error_ = e.what();
      backoff_s_ = backoff_s_ == 0 ? opt_.retry_min_s
                                   : std::min(opt_.retry_max_s, backoff_s_ * 2);
      next_retry_ =
          now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(backoff_s_));
    }
  }

  void write_locked(const store::PendingWrite& w) {
    if (!w.is_block) {
      ins_pending_.bind_blob(1, w.enc.numeric).bind_blob(2, w.enc.rest).run();
      return;
    }
    // The block replaces its window's batches (the queue is written in
    // order, so every batch in `pending` now is of this block).
    Transaction tx(wdb_);
    ins_block_.bind(1, int64_t{0})
        .bind(2, w.win)
        .bind(3, w.t0)
        .bind(4, w.t1)
        .bind(5, static_cast<int64_t>(w.samples))
        .bind_blob(6, w.enc.numeric)
        .bind_blob(7, w.enc.rest)
        .run();
    del_pending_.run();
    tx.commit();
  }

  void write_alert_locked(const StoredAlert& a) {
    upsert_alert_.bind_text(1, a.key).bind(2, a.started_at).bind(3, a.fired_at);
    if (a.resolved_at > 0)
      upsert_alert_.bind(4, a.resolved_at);
    else
      upsert_alert_.bind_null(4);
    upsert_alert_.bind_text(5, a.ended)
        .bind_text(6, a.id)
        .bind_text(7, a.severity)
        .bind_text(8, gpus_text(a.gpus))
        .bind_text(9, a.title)
        .bind_text(10, a.evidence)
        .bind_text(11, a.action)
        .run();
  }

  // Alerts a previous run left firing ended when it stopped: they end at
  // its last stored sample, marked "serve stopped" (not "resolved": nobody
  // saw them clear).
  void close_orphan_alerts() {
    try {
      Stmt up(wdb_,
              "UPDATE alerts SET resolved_at = max(fired_at, ?1), ended = "
              "'serve stopped' WHERE resolved_at IS NULL");
      up.bind(1, std::isfinite(last_t_) ? last_t_ : 0.0).run();
    } catch (const StoreError&) {
      // A read-only disk: they stay open until a later start closes them.
    }
  }

  // A tier-1 block (an hour) that straddles the retention cutoff loses its
  // minutes before it, so that what is older than retention is gone even
  // where the raw blocks that covered it were deleted.
  void trim_tier1_locked(double cutoff) {
    Stmt sel(wdb_,
             "SELECT id, num, rest FROM blocks WHERE tier = 1 AND t0 < ?1 AND "
             "t1 >= ?1");
    sel.bind(1, cutoff);
    struct Row {
      int64_t id;
      std::string num, rest;
    };
    std::vector<Row> rows;
    while (sel.step())
      rows.push_back({sel.col_int(0), std::string(sel.col_blob(1)),
                      std::string(sel.col_blob(2))});
    sel.reset();
    for (const auto& row : rows) {
      auto samples = try_decode(row.num, row.rest);
      if (!samples) continue;  // maintain's decode pass quarantines it
      std::erase_if(*samples, [&](const Sample& x) { return x.t < cutoff; });
      if (samples->empty()) continue;
      auto enc = store::encode_block(*samples, kSealZstdLevel);
      Stmt up(wdb_,
              "UPDATE blocks SET t0 = ?1, t1 = ?2, n = ?3, num = ?4, rest = ?5 "
              "WHERE id = ?6");
      up.bind(1, samples->front().t)
          .bind(2, samples->back().t)
          .bind(3, static_cast<int64_t>(samples->size()))
          .bind_blob(4, enc.numeric)
          .bind_blob(5, enc.rest)
          .bind(6, row.id)
          .run();
    }
  }

  // Adds averaged samples (all in tier-1 window `win`) to that window's
  // block, creating it if needed. Runs inside the caller's transaction.
  void merge_into_tier1(double win, std::vector<Sample> added) {
    Stmt sel(wdb_,
             "SELECT id, t0, num, rest FROM blocks WHERE tier = 1 AND win = ?1 "
             "LIMIT 1");
    sel.bind(1, win);
    std::vector<Sample> all;
    int64_t id = -1;
    if (sel.step()) {
      id = sel.col_int(0);
      auto old = try_decode(sel.col_blob(2), sel.col_blob(3));
      sel.reset();
      if (old) {
        all = std::move(*old);
      } else {
        store::quarantine_row(wdb_, "blocks", id,
                              "tier-1 block does not decode");
        ++quarantined_;
        id = -1;
      }
    }
    all.insert(all.end(), std::make_move_iterator(added.begin()),
               std::make_move_iterator(added.end()));
    std::stable_sort(
        all.begin(), all.end(),
        [](const Sample& a, const Sample& b) { return a.t < b.t; });
    auto enc = store::encode_block(all, kSealZstdLevel);
    if (id >= 0) {
      Stmt up(wdb_,
              "UPDATE blocks SET t0 = ?1, t1 = ?2, n = ?3, num = ?4, rest = ?5 "
              "WHERE id = ?6");
      up.bind(1, all.front().t)
          .bind(2, all.back().t)
          .bind(3, static_cast<int64_t>(all.size()))
          .bind_blob(4, enc.numeric)
          .bind_blob(5, enc.rest)
          .bind(6, id)
          .run();
    } else {
      ins_block_.bind(1, int64_t{1})
          .bind(2, win)
          .bind(3, all.front().t)
          .bind(4, all.back().t)
          .bind(5, static_cast<int64_t>(all.size()))
          .bind_blob(6, enc.numeric)
          .bind_blob(7, enc.rest)
          .run();
    }
  }

  // Samples of sealed blocks still waiting for the disk (full), so reads
  // see them too. Caller holds mu_.
  std::vector<Sample> queued_samples(double since, double until) const {
    std::vector<Sample> out;
    for (const auto& w : queue_.items()) {
      if (!w.is_block || w.t1 < since || w.t0 > until) continue;
      for (auto& s : try_decode(w.enc.numeric, w.enc.rest)
                         .value_or(std::vector<Sample>{}))
        if (s.t >= since && s.t <= until) out.push_back(std::move(s));
    }
    return out;
  }

  // nullopt when the bytes do not decode (a corrupted row).
  static std::optional<std::vector<Sample>> try_decode(std::string_view num,
                                                       std::string_view rest) {
    try {
      return store::decode_block(num, rest);
    } catch (const std::exception&) {  // CodecError, or bad JSON in rest
      return std::nullopt;
    }
  }

  int64_t meta_int(const char* key) const {
    sel_meta_.reset();
    sel_meta_.bind_text(1, key);
    int64_t v = 0;
    if (sel_meta_.step()) {
      const std::string text(sel_meta_.col_blob(0));
      v = std::strtoll(text.c_str(), nullptr, 10);
    }
    sel_meta_.reset();
    return v;
  }

  // Where the tiers overlap (a read transaction must be open on `db`):
  // raw blocks up to rolled_id are also in tier 1; tier 1 is only needed
  // before raw_from, the first raw sample kept.
  struct TierView {
    int64_t rolled_id = 0;
    double raw_from = std::numeric_limits<double>::infinity();
  };
  static TierView tier_view(const Db& db) {
    TierView v;
    Stmt rolled(db, "SELECT value FROM meta WHERE key = 'rolled_id'");
    if (rolled.step())
      v.rolled_id =
          std::strtoll(std::string(rolled.col_blob(0)).c_str(), nullptr, 10);
    Stmt first(db, "SELECT min(t0) FROM blocks WHERE tier = 0");
    if (first.step() && !first.col_is_null(0)) v.raw_from = first.col_double(0);
    return v;
  }

  // The part [since, hi] of a block a read uses, or false to skip it:
  // minute-step reads take tier 1 and only the raw blocks not rolled up
  // yet; every other read takes raw data, and tier 1 only before it.
  static bool block_range(const TierView& v, bool minute, int64_t id,
                          int64_t tier, double until, double& hi) {
    hi = until;
    if (minute) return tier != 0 || id > v.rolled_id;
    if (tier == 0) return true;
    hi = std::min(until, std::nextafter(v.raw_from, -1e308));
    return true;
  }

  TraceHeader read_header() const {
    sel_meta_.reset();
    sel_meta_.bind_text(1, "header");
    if (!sel_meta_.step()) return TraceHeader{};
    std::string text(sel_meta_.col_blob(0));
    sel_meta_.reset();
    try {
      return header_from_json(text, opt_.path + ": stored header");
    } catch (const TraceError& e) {
      throw StoreError(e.what());
    }
  }

  Metric parse_metric(const std::string& name) const {
    auto suffix =
        [&](std::string_view prefix) -> std::optional<std::string_view> {
      if (name.size() > prefix.size() &&
          name.compare(0, prefix.size(), prefix) == 0)
        return std::string_view(name).substr(prefix.size());
      return std::nullopt;
    };
    if (auto f = suffix("gpu."); f && store::find_gpu_field(*f) >= 0)
      return {Metric::kGpu, store::find_gpu_field(*f)};
    if (auto f = suffix("host."); f && store::find_host_field(*f) >= 0)
      return {Metric::kHost, store::find_host_field(*f)};
    if (name == "process.used_bytes") return {Metric::kProcessUsed};
    if (name == "process.cpu_pct") return {Metric::kProcessCpu};
    throw StoreError(
        opt_.path + ": unknown metric '" + name +
        "' (gpu.<field>, host.<field>, process.used_bytes, process.cpu_pct)");
  }

  // Points of one sample.
  static void add_points(SeriesSet& set, const Metric& m,
                         std::optional<int> gpu, std::optional<int> pid,
                         const Sample& s) {
    switch (m.kind) {
      case Metric::kGpu:
        for (const auto& g : s.gpus) {
          if (gpu && g.index != *gpu) continue;
          Cell c = store::get_cell(g, store::gpu_fields()[m.field]);
          if (c.present) set.add(g.index, std::nullopt, s.t, c.as_double());
        }
        break;
      case Metric::kHost: {
        Cell c = store::get_cell(s.host, store::host_fields()[m.field]);
        if (c.present) set.add(std::nullopt, std::nullopt, s.t, c.as_double());
        break;
      }
      case Metric::kProcessUsed:
        for (const auto& g : s.gpus) {
          if ((gpu && g.index != *gpu) || !g.processes) continue;
          for (const auto& p : *g.processes)
            if (p.used_bytes && (!pid || static_cast<int64_t>(p.pid) == *pid))
              set.add(g.index, static_cast<int>(p.pid), s.t,
                      static_cast<double>(*p.used_bytes));
        }
        break;
      case Metric::kProcessCpu:
        for (const auto& p : s.processes) {
          if (!p.cpu_pct || (pid && static_cast<int64_t>(p.pid) != *pid))
            continue;
          // The GPU a process is on (first that lists it); a process on no
          // GPU is only reported when asked for by pid.
          std::optional<int> on_gpu;
          for (const auto& g : s.gpus) {
            if (!g.processes) continue;
            for (const auto& gp : *g.processes)
              if (gp.pid == p.pid && (!gpu || g.index == *gpu))
                on_gpu = g.index;
            if (on_gpu) break;
          }
          if (gpu && !on_gpu) continue;
          if (!on_gpu && !pid) continue;
          set.add(on_gpu, static_cast<int>(p.pid), s.t, *p.cpu_pct);
        }
        break;
    }
  }

  // Points of a decoded block's columns (gpu.* and host.* metrics).
  static void add_points(SeriesSet& set, const Metric& m,
                         std::optional<int> gpu,
                         const store::NumericColumns& cols, double since,
                         double until) {
    auto add_column = [&](std::optional<int> g, const std::vector<Cell>& col) {
      for (size_t i = 0; i < col.size() && i < cols.t.size(); ++i)
        if (col[i].present && cols.t[i] >= since && cols.t[i] <= until)
          set.add(g, std::nullopt, cols.t[i], col[i].as_double());
    };
    if (m.kind == Metric::kHost) {
      add_column(std::nullopt, cols.host[m.field]);
      return;
    }
    if (m.kind != Metric::kGpu) return;
    for (size_t g = 0; g < cols.gpu_indices.size(); ++g)
      if (!gpu || cols.gpu_indices[g] == *gpu)
        add_column(cols.gpu_indices[g], cols.gpu[g][m.field]);
  }

  // Points of a format-2 block's process columns (process metrics), with
  // the semantics of the per-sample add_points above.
  static void add_process_points(SeriesSet& set, const Metric& m,
                                 std::optional<int> gpu, std::optional<int> pid,
                                 const store::NumericColumns& cols,
                                 double since, double until) {
    const auto& pc = cols.processes;
    const size_t n = cols.t.size();
    auto in_range = [&](uint32_t i) {
      return i < n && cols.t[i] >= since && cols.t[i] <= until;
    };
    auto wanted = [&](uint32_t p) {
      return !pid || static_cast<int64_t>(p) == *pid;
    };
    if (m.kind == Metric::kProcessUsed) {
      for (const auto& g : pc.gpus) {
        if (gpu && g.index != *gpu) continue;
        for (const auto& e : g.entries) {
          if (!wanted(e.pid)) continue;
          for (size_t k = 0; k < e.at.size() && k < e.used.size(); ++k)
            if (e.used[k].present && in_range(e.at[k]))
              set.add(g.index, static_cast<int>(e.pid), cols.t[e.at[k]],
                      e.used[k].as_double());
        }
      }
      return;
    }
    if (m.kind != Metric::kProcessCpu) return;
    // The GPU each pid is on in each sample: the first (by index) whose
    // list names it, among the GPUs asked for.
    std::map<uint32_t, std::vector<int>> on_gpu;
    for (const auto& proc : pc.procs)
      if (wanted(proc.statics.pid)) on_gpu[proc.statics.pid];
    for (const auto& g : pc.gpus) {
      if (gpu && g.index != *gpu) continue;
      for (const auto& e : g.entries) {
        auto it = on_gpu.find(e.pid);
        if (it == on_gpu.end()) continue;
        if (it->second.empty()) it->second.assign(n, -1);
        for (uint32_t i : e.at)
          if (i < n && it->second[i] < 0) it->second[i] = g.index;
      }
    }
    for (const auto& proc : pc.procs) {
      const uint32_t p = proc.statics.pid;
      if (!wanted(p)) continue;
      const auto& where = on_gpu[p];
      for (size_t k = 0; k < proc.at.size() && k < proc.cpu_pct.size(); ++k) {
        const uint32_t i = proc.at[k];
        if (!proc.cpu_pct[k].present || !in_range(i)) continue;
        const int g = where.empty() ? -1 : where[i];
        if (gpu && g < 0) continue;
        if (g < 0 && !pid) continue;
        set.add(g >= 0 ? std::optional<int>(g) : std::nullopt,
                static_cast<int>(p), cols.t[i], proc.cpu_pct[k].as_double());
      }
    }
  }

  // Averages per step bucket [k*step, (k+1)*step), stamped with the start.
  static std::vector<HistoryPoint> bucket(
      const std::vector<HistoryPoint>& points, double step) {
    std::vector<HistoryPoint> out;
    size_t i = 0;
    while (i < points.size()) {
      double b = std::floor(points[i].t / step) * step;
      double sum = 0;
      size_t n = 0;
      while (i < points.size() && std::floor(points[i].t / step) * step == b) {
        sum += points[i].v;
        ++n;
        ++i;
      }
      // Rounded like the stored averages (downsample.h): far below any
      // sensor's resolution, and a shorter answer.
      const double scale = std::pow(10.0, store::kAverageDecimals);
      out.push_back({b, std::round(sum / n * scale) / scale});
    }
    return out;
  }

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
  store::WriteQueue queue_;
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

}  // namespace

double HistoryStore::stored_step_s(double age_s) {
  return age_s < store::kRawKeepS ? 0 : store::kTier1StepS;
}

std::unique_ptr<HistoryStore> HistoryStore::open(const StoreOptions& options) {
  if (options.path.empty())
    throw StoreError("history store: no database path given");
  return std::make_unique<SqliteHistoryStore>(options);
}

}  // namespace gd
