// SqliteHistoryStore (sqlite_history_store.h): the alert history, one row
// per alert in `alerts`, written through the writer's queue (alerts wait
// in memory while the disk is full, like samples).
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "store/sqlite_history_store.h"

namespace gd::store {

namespace {

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

}  // namespace

void SqliteHistoryStore::record_alert(const StoredAlert& a) {
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

std::vector<StoredAlert> SqliteHistoryStore::alerts(double since,
                                                    double until) const {
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
    if (a.started_at <= until && (a.resolved_at == 0 || a.resolved_at >= since))
      out.push_back(a);
  return out;
}

void SqliteHistoryStore::write_alert_locked(const StoredAlert& a) {
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
void SqliteHistoryStore::close_orphan_alerts() {
  try {
    Stmt up(wdb_,
            "UPDATE alerts SET resolved_at = max(fired_at, ?1), ended = "
            "'serve stopped' WHERE resolved_at IS NULL");
    up.bind(1, std::isfinite(last_t_) ? last_t_ : 0.0).run();
  } catch (const StoreError&) {
    // A read-only disk: they stay open until a later start closes them.
  }
}

}  // namespace gd::store
