// `gpudoctor db check` / `db repair`: finds the rows of a history DB whose
// bytes no longer decode (and what SQLite's own integrity check reports),
// and moves the bad rows to quarantine so the store is healthy again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gd {

struct CorruptRow {
  std::string table;  // "blocks" or "pending"
  int64_t id = 0;     // blocks.id / pending.seq
  std::optional<double> t0;
  std::optional<double> t1;
  std::string why;
  bool newer_format = false;  // a newer gpudoctor's block: not corrupt
};

struct StoreCheck {
  std::vector<std::string> integrity_errors;  // PRAGMA integrity_check lines
  std::vector<CorruptRow> corrupt;
  size_t blocks = 0;             // blocks examined
  size_t batches = 0;            // pending batches examined
  int64_t quarantined_rows = 0;  // in the quarantine table (before + now)
  size_t repaired = 0;           // rows this run moved to quarantine
  bool clean() const { return integrity_errors.empty() && corrupt.empty(); }
};

// Reads every block and pending batch of the DB at `path` (opened
// read-only). Throws StoreError "PATH: why" when it is not a history DB,
// StoreVersionError when its schema version is not one this gpudoctor
// knows.
StoreCheck check_store(const std::string& path);

// Quarantines what check_store finds; returns the check of the repaired
// store, with `repaired` set. Opens an existing regular file only (never
// creates one, never follows a symlink); refuses, touching nothing, a
// schema version it does not know or a block of a newer format.
StoreCheck repair_store(const std::string& path);

}  // namespace gd
