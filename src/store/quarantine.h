// Corrupt rows moved aside: a block or pending batch whose bytes no longer
// decode goes to the `quarantine` table (kept for inspection, never read
// again by queries), so one bad row costs only its own samples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/sqlite_db.h"

namespace gd::store {

// PRAGMA application_id of a gpudoctor history DB ("GDHS"): tells our file
// from any other SQLite file.
inline constexpr int32_t kApplicationId = 0x47444853;

// Creates the table if this DB predates it.
void ensure_quarantine_table(Db& db);

// Moves row `id` of `table` ("blocks" or "pending") into quarantine with
// `reason`, in the caller's transaction if one is open.
void quarantine_row(Db& db, std::string_view table, int64_t id,
                    const std::string& reason);

// Rows in quarantine (0 when the table does not exist yet).
int64_t quarantined_rows(Db& db);

}  // namespace gd::store
