#include "store/store_check.h"

#include <sqlite3.h>

#include "store/block_codec.h"
#include "store/history_store.h"
#include "store/quarantine.h"
#include "store/schema_version.h"
#include "store/sqlite_db.h"

namespace gd {
namespace {

using store::Db;
using store::Stmt;

int64_t pragma_int(Db& db, const char* sql) {
  Stmt st(db, sql);
  int64_t v = st.step() ? st.col_int(0) : 0;
  st.reset();
  return v;
}

// Opens `path` and refuses anything but a gpudoctor history DB of a schema
// version this gpudoctor knows.
Db open_history_db(const std::string& path, store::OpenMode mode) {
  Db db(path, mode);
  int64_t app_id = 0, version = 0;
  try {
    app_id = pragma_int(db, "PRAGMA application_id");
    version = pragma_int(db, "PRAGMA user_version");
  } catch (const StoreError&) {
    throw StoreError(path + ": not a gpudoctor history database (" +
                     sqlite3_errmsg(db.handle()) + ")");
  }
  if (app_id != store::kApplicationId)
    throw StoreError(path + ": not a gpudoctor history database");
  store::check_schema_version(path, version);
  return db;
}

// A newer gpudoctor's blocks are data, not damage: repair leaves the file
// alone rather than quarantine them.
void refuse_newer_blocks(const std::string& path, const StoreCheck& c) {
  for (const auto& row : c.corrupt)
    if (row.newer_format)
      throw StoreVersionError(path + ": " + row.table +
                              " id=" + std::to_string(row.id) + ": " + row.why +
                              "; nothing moved to quarantine");
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
    bool newer = false;
    try {
      store::decode_block(st.col_blob(3), st.col_blob(4));
    } catch (const std::exception& e) {  // CodecError, or bad JSON in rest
      newer = dynamic_cast<const store::NewerBlockFormat*>(&e) != nullptr;
      CorruptRow row;
      row.table = table;
      row.id = st.col_int(0);
      if (std::string_view(table) == "blocks") {
        row.t0 = st.col_double(1);
        row.t1 = st.col_double(2);
      }
      row.why = e.what();
      row.newer_format = newer;
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
  Db db = open_history_db(path, store::OpenMode::kReadOnly);
  return check_open(db);
}

StoreCheck repair_store(const std::string& path) {
  Db db = open_history_db(path, store::OpenMode::kExistingOnly);
  StoreCheck before = check_open(db);
  refuse_newer_blocks(path, before);
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
