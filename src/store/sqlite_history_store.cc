// SqliteHistoryStore (sqlite_history_store.h): opening a store, the stored
// header, the writer's health, and HistoryStore::open.
#include "store/sqlite_history_store.h"

#include <cstdlib>
#include <memory>

#include "store/block_codec.h"
#include "store/downsample.h"
#include "store/quarantine.h"

namespace gd {

HistoryStore::~HistoryStore() = default;

namespace store {

SqliteHistoryStore::SqliteHistoryStore(const StoreOptions& o)
    : opt_(o), queue_(o.max_pending_bytes) {
  if (opt_.batch_samples == 0) opt_.batch_samples = 1;
  rdb_ = open_checked(opt_.read_only);
  if (!opt_.read_only) {
    wdb_ = open_checked(false);
    store::ensure_quarantine_table(wdb_);
    ins_pending_ = Stmt(wdb_, "INSERT INTO pending(num, rest) VALUES(?1, ?2)");
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

SqliteHistoryStore::~SqliteHistoryStore() {
  try {
    flush();
  } catch (...) {
    // Nothing left to report to: the caller is gone. At most the
    // unflushed batch is lost, as after a crash.
  }
}

TraceHeader SqliteHistoryStore::header() const {
  std::lock_guard rlock(rmu_);
  return read_header();
}

StoreHealth SqliteHistoryStore::health() const {
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

void SqliteHistoryStore::require_writable() const {
  if (opt_.read_only) throw StoreError(opt_.path + ": opened read-only");
}

std::optional<std::vector<Sample>> SqliteHistoryStore::try_decode(
    std::string_view num, std::string_view rest) {
  try {
    return store::decode_block(num, rest);
  } catch (const std::exception&) {  // CodecError, or bad JSON in rest
    return std::nullopt;
  }
}

int64_t SqliteHistoryStore::meta_int(const char* key) const {
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

TraceHeader SqliteHistoryStore::read_header() const {
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

}  // namespace store

double HistoryStore::stored_step_s(double age_s) {
  return age_s < store::kRawKeepS ? 0 : store::kTier1StepS;
}

std::unique_ptr<HistoryStore> HistoryStore::open(const StoreOptions& options) {
  if (options.path.empty())
    throw StoreError("history store: no database path given");
  return std::make_unique<store::SqliteHistoryStore>(options);
}

}  // namespace gd
