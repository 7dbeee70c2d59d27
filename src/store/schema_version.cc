#include "store/schema_version.h"

#include "store/history_store.h"

namespace gd::store {

void check_schema_version(const std::string& path, int64_t version) {
  const std::string v = std::to_string(version);
  if (version > kSchemaVersion)
    throw StoreVersionError(
        path + ": history schema version " + v +
        " is newer than this gpudoctor reads (" +
        std::to_string(kSchemaVersion) +
        "); left untouched: use the gpudoctor that wrote it, or a newer one");
  if (version < kOldestSchemaVersion)
    throw StoreVersionError(path + ": history schema version " + v +
                            " is not one gpudoctor writes (" +
                            std::to_string(kOldestSchemaVersion) + ".." +
                            std::to_string(kSchemaVersion) +
                            "); left untouched");
}

}  // namespace gd::store
