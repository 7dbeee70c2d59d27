#include "store/quarantine.h"

#include <chrono>

#include "store/history_store.h"

namespace gd::store {

void ensure_quarantine_table(Db& db) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS quarantine("
      "id INTEGER PRIMARY KEY, source TEXT NOT NULL, source_id INTEGER NOT "
      "NULL, t0 REAL, reason TEXT NOT NULL, at REAL NOT NULL, num BLOB, rest "
      "BLOB)");
}

void quarantine_row(Db& db, std::string_view table, int64_t id,
                    const std::string& reason) {
  const bool block = table == "blocks";
  if (!block && table != "pending")
    throw StoreError(db.path() + ": cannot quarantine rows of " +
                     std::string(table));
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  Stmt copy(db, block ? "INSERT INTO quarantine(source, source_id, t0, reason, "
                        "at, num, rest) SELECT 'blocks', id, t0, ?1, ?2, num, "
                        "rest FROM blocks WHERE id = ?3"
                      : "INSERT INTO quarantine(source, source_id, t0, reason, "
                        "at, num, rest) SELECT 'pending', seq, NULL, ?1, ?2, "
                        "num, rest FROM pending WHERE seq = ?3");
  copy.bind_text(1, reason).bind(2, now).bind(3, id).run();
  Stmt del(db, block ? "DELETE FROM blocks WHERE id = ?1"
                     : "DELETE FROM pending WHERE seq = ?1");
  del.bind(1, id).run();
}

int64_t quarantined_rows(Db& db) {
  Stmt exists(db,
              "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
              "name = 'quarantine'");
  bool has = exists.step() && exists.col_int(0) > 0;
  exists.reset();
  if (!has) return 0;
  Stmt count(db, "SELECT count(*) FROM quarantine");
  int64_t n = count.step() ? count.col_int(0) : 0;
  count.reset();
  return n;
}

}  // namespace gd::store
