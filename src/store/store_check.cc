#include "store/store_check.h"

#include <sqlite3.h>

#include "store/block_codec.h"
#include "store/history_store.h"
#include "store/quarantine.h"
#include "store/sqlite_db.h"

namespace gd {
namespace {

using store::Db;
using store::Stmt;

// Opens `path` and refuses anything but a gpudoctor history DB.
Db open_history_db(const std::string& path, bool read_only) {
  Db db(path, read_only);
  int64_t app_id = 0;
  try {
    Stmt st(db, "PRAGMA application_id");
    if (st.step()) app_id = st.col_int(0);
    st.reset();
  } catch (const StoreError&) {
    throw StoreError(path + ": not a gpudoctor history database (" +
                     sqlite3_errmsg(db.handle()) + ")");
  }
  if (app_id != store::kApplicationId)
    throw StoreError(path + ": not a gpudoctor history database");
  return db;
}

std::vector<std::string> integrity_errors(Db& db) {
  std::vector<std::string> out;
  try {
    Stmt st(db, "PRAGMA integrity_check");
    while (st.step()) {
      std::string line(st.col_blob(0));
      if (line != "ok") out.push_back(line);
    }
  } catch (const StoreError& e) {
    out.push_back(e.what());
  }
  return out;
}

// Decodes every row of `sql` (id, t0, t1, num, rest) into `check`.
void check_rows(Db& db, const char* table, const char* sql, size_t& examined,
                std::vector<CorruptRow>& corrupt) {
  Stmt st(db, sql);
  while (st.step()) {
    ++examined;
    try {
      store::decode_block(st.col_blob(3), st.col_blob(4));
    } catch (const std::exception& e) {  // CodecError, or bad JSON in rest
      CorruptRow row;
      row.table = table;
      row.id = st.col_int(0);
      if (std::string_view(table) == "blocks") {
        row.t0 = st.col_double(1);
        row.t1 = st.col_double(2);
      }
      row.why = e.what();
      corrupt.push_back(std::move(row));
    }
  }
}

StoreCheck check_open(Db& db) {
  StoreCheck c;
  c.integrity_errors = integrity_errors(db);
  try {
    check_rows(db, "blocks",
               "SELECT id, t0, t1, num, rest FROM blocks ORDER BY t0", c.blocks,
               c.corrupt);
    check_rows(db, "pending",
               "SELECT seq, NULL, NULL, num, rest FROM pending ORDER BY seq",
               c.batches, c.corrupt);
    c.quarantined_rows = store::quarantined_rows(db);
  } catch (const StoreError& e) {
    // Pages too damaged to read: SQLite's integrity check says more.
    c.integrity_errors.push_back(e.what());
  }
  return c;
}

}  // namespace

StoreCheck check_store(const std::string& path) {
  Db db = open_history_db(path, true);
  return check_open(db);
}

StoreCheck repair_store(const std::string& path) {
  Db db = open_history_db(path, false);
  StoreCheck before = check_open(db);
  if (!before.corrupt.empty()) {
    store::Transaction tx(db);
    store::ensure_quarantine_table(db);
    for (const auto& row : before.corrupt)
      store::quarantine_row(db, row.table, row.id, row.why);
    tx.commit();
  }
  StoreCheck after = check_open(db);
  after.repaired = before.corrupt.size();
  return after;
}

}  // namespace gd
