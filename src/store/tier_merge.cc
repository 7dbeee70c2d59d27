// SqliteHistoryStore (sqlite_history_store.h): maintain(). Retention
// deletes what is older than retention_s; every sealed raw block is rolled
// up into minute averages (tier 1, one block per hour) and raw blocks go
// once they are older than kRawKeepS and rolled up.
#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "store/block_codec.h"
#include "store/downsample.h"
#include "store/quarantine.h"
#include "store/sqlite_history_store.h"

namespace gd::store {

void SqliteHistoryStore::maintain(double now) {
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

// A tier-1 block (an hour) that straddles the retention cutoff loses its
// minutes before it, so that what is older than retention is gone even
// where the raw blocks that covered it were deleted.
void SqliteHistoryStore::trim_tier1_locked(double cutoff) {
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
void SqliteHistoryStore::merge_into_tier1(double win,
                                          std::vector<Sample> added) {
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
      store::quarantine_row(wdb_, "blocks", id, "tier-1 block does not decode");
      ++quarantined_;
      id = -1;
    }
  }
  all.insert(all.end(), std::make_move_iterator(added.begin()),
             std::make_move_iterator(added.end()));
  std::stable_sort(all.begin(), all.end(),
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

}  // namespace gd::store
