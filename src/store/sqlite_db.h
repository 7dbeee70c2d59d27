// Minimal RAII over the SQLite C API: a connection and prepared statements.
// Errors throw StoreError "PATH: what: sqlite's message".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace gd::store {

// How a Db opens its file.
enum class OpenMode {
  kReadOnly,
  kCreate,  // read-write, creating the file if missing (serve)
  // Read-write, an existing regular file only: never created, never
  // through a symlink (db repair, often run as root on a path it is given).
  kExistingOnly,
};

class Db {
 public:
  Db() = default;
  // Opens (creating unless read_only) the file; throws StoreError.
  Db(const std::string& path, bool read_only);
  Db(const std::string& path, OpenMode mode);
  ~Db();
  Db(Db&& o) noexcept;
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const std::string& sql);
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  // Throws StoreError "PATH: what: <sqlite message>".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Stmt {
 public:
  Stmt() = default;
  Stmt(const Db& db, const char* sql);
  ~Stmt();
  Stmt(Stmt&& o) noexcept;
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Binds are 1-based like SQLite's.
  Stmt& bind(int i, double v);
  Stmt& bind(int i, int64_t v);
  Stmt& bind_blob(int i, std::string_view v);
  Stmt& bind_text(int i, std::string_view v);
  Stmt& bind_null(int i);
  // true while a row is available; resets the statement at the end.
  bool step();
  void run();  // step() to completion, then reset
  void reset();
  double col_double(int i) const;
  bool col_is_null(int i) const;
  int64_t col_int(int i) const;
  std::string_view col_blob(int i) const;  // valid until the next step()

 private:
  const Db* db_ = nullptr;
  sqlite3_stmt* st_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace gd::store
