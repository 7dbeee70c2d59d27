// The history DB's schema version (PRAGMA user_version) and the check every
// tool makes before it reads or writes a history: a version this gpudoctor
// does not know (a newer gpudoctor's file, or one no gpudoctor wrote) is
// refused, touching nothing, instead of being read with the wrong layout,
// migrated or "repaired" into quarantine.
#pragma once

#include <cstdint>
#include <string>

namespace gd::store {

// PRAGMA user_version: bump with a migration step in the store's migrate().
// 1: blocks, pending, meta. 2: + alerts (migrated in place).
inline constexpr int64_t kSchemaVersion = 2;
// The oldest version this gpudoctor reads and upgrades.
inline constexpr int64_t kOldestSchemaVersion = 1;

// Throws StoreVersionError "PATH: history schema version V is newer than
// this gpudoctor reads (2); ..." or "... is not one gpudoctor writes ...".
void check_schema_version(const std::string& path, int64_t version);

}  // namespace gd::store
