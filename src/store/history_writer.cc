// SqliteHistoryStore (sqlite_history_store.h): the writer. Samples go into
// the open raw block, are encoded in batches into the write queue and
// written to `pending`; a block is sealed into one `blocks` row when its
// window ends. A failed write waits in the queue and is retried with
// backoff.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>

#include "store/block_codec.h"
#include "store/downsample.h"
#include "store/quarantine.h"
#include "store/sqlite_history_store.h"

namespace gd::store {

void SqliteHistoryStore::set_header(const TraceHeader& h) {
  std::lock_guard lock(mu_);
  require_writable();
  // Written with the queue: a full disk at startup must not stop serve.
  header_json_ = header_to_json(h);
  next_retry_ = {};
  drain_locked();
}

void SqliteHistoryStore::append(const Sample& s) {
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

void SqliteHistoryStore::flush() {
  std::lock_guard lock(mu_);
  if (opt_.read_only) return;
  next_retry_ = {};
  flush_locked();
  if (!queue_.empty())
    throw StoreError(last_error_ + " (" + std::to_string(queue_.bytes()) +
                     " bytes of history not written)");
}

// A corrupt batch must not keep the daemon from starting: it is moved to
// quarantine (or, opened read-only, skipped and reported by reads).
void SqliteHistoryStore::load_pending() {
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

// Encodes the unflushed samples once into the queue, then writes.
void SqliteHistoryStore::flush_locked() {
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

void SqliteHistoryStore::seal_locked() {
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
void SqliteHistoryStore::drain_locked() {
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

void SqliteHistoryStore::write_locked(const PendingWrite& w) {
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

}  // namespace gd::store
