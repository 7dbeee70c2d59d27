// SqliteHistoryStore (sqlite_history_store.h): the tables, the check that a
// file is a gpudoctor history of a version this build reads, and the
// upgrade of older versions in place.
#include <sqlite3.h>

#include <string>

#include "store/quarantine.h"
#include "store/schema_version.h"
#include "store/sqlite_history_store.h"

namespace gd::store {

namespace {

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

int64_t query_int(Db& db, const char* sql) {
  Stmt st(db, sql);
  int64_t v = 0;
  if (st.step()) v = st.col_int(0);
  st.reset();
  return v;
}

}  // namespace

Db SqliteHistoryStore::open_checked(bool read_only) {
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

void SqliteHistoryStore::create(Db& db) {
  Transaction tx(db);
  db.exec(kSchema);
  db.exec(kAlertsSchema);
  db.exec("PRAGMA application_id=" + std::to_string(kApplicationId));
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
}

// Upgrades an older schema in place, one version at a time, each step
// in one transaction.
void SqliteHistoryStore::migrate(Db& db, int64_t version) {
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

}  // namespace gd::store
