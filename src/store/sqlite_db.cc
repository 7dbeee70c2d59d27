#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

#include "store/existing_file.h"
#include "store/history_store.h"

namespace gd::store {

Db::Db(const std::string& path, bool read_only)
    : Db(path, read_only ? OpenMode::kReadOnly : OpenMode::kCreate) {}

Db::Db(const std::string& path, OpenMode mode) : path_(path) {
  int flags = SQLITE_OPEN_READONLY;
  if (mode == OpenMode::kCreate)
    flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (mode == OpenMode::kExistingOnly) {
    check_existing_file(path);
    flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW;
  }
  // The store serialises access itself (one connection per role, each
  // behind a mutex); SQLite's own full mutexing is then not needed.
  flags |= SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(path + ": cannot open: " + why);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

Db::Db(Db&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)) {}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(o.db_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

void Db::fail(std::string_view what) const {
  throw StoreError(path_ + ": " + std::string(what) + ": " +
                   sqlite3_errmsg(db_));
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw StoreError(path_ + ": " + why);
  }
}

Stmt::Stmt(const Db& db, const char* sql) : db_(&db) {
  if (sqlite3_prepare_v3(db.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &st_,
                         nullptr) != SQLITE_OK)
    db.fail("prepare");
}

Stmt::~Stmt() {
  if (st_) sqlite3_finalize(st_);
}

Stmt::Stmt(Stmt&& o) noexcept
    : db_(o.db_), st_(std::exchange(o.st_, nullptr)) {}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (st_) sqlite3_finalize(st_);
    db_ = o.db_;
    st_ = std::exchange(o.st_, nullptr);
  }
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(st_, i, v) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(st_, i, v) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Stmt& Stmt::bind_blob(int i, std::string_view v) {
  if (sqlite3_bind_blob64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT) !=
      SQLITE_OK)
    db_->fail("bind");
  return *this;
}
Stmt& Stmt::bind_text(int i, std::string_view v) {
  if (sqlite3_bind_text64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT,
                          SQLITE_UTF8) != SQLITE_OK)
    db_->fail("bind");
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  if (sqlite3_bind_null(st_, i) != SQLITE_OK) db_->fail("bind");
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    reset();
    return false;
  }
  std::string msg = sqlite3_errmsg(db_->handle());
  sqlite3_reset(st_);
  throw StoreError(db_->path() + ": " + msg);
}

void Stmt::run() {
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

bool Stmt::col_is_null(int i) const {
  return sqlite3_column_type(st_, i) == SQLITE_NULL;
}

double Stmt::col_double(int i) const { return sqlite3_column_double(st_, i); }
int64_t Stmt::col_int(int i) const { return sqlite3_column_int64(st_, i); }
std::string_view Stmt::col_blob(int i) const {
  const void* p = sqlite3_column_blob(st_, i);
  int n = sqlite3_column_bytes(st_, i);
  return p ? std::string_view(static_cast<const char*>(p), n)
           : std::string_view();
}

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {
      // A failed statement may already have rolled back; nothing to undo.
    }
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace gd::store
