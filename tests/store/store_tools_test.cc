// `db check`, `db repair`, export and serve's open (the store side of
// them) against a history they must not touch: a schema version this
// gpudoctor does not know, a newer gpudoctor's blocks, a path that does
// not exist or is a symlink.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/store_check.h"
#include "store_test_util.h"

namespace gd {
namespace {

using testing::open_store;
using testing::sql;
using testing::sql_int;
using testing::StoreDir;

// Two sealed blocks and a few pending batches, the store closed (no WAL).
std::string history(const StoreDir& dir) {
  return testing::filled_history(dir, 1230);
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The error `fn` throws, or "" when it returns.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const StoreVersionError& e) {
    return std::string("version: ") + e.what();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(StoreTools, EveryToolRefusesAnUnknownSchemaVersion) {
  for (int version : {99, 0, -5}) {
    StoreDir dir;
    const std::string path = history(dir);
    sql(path, "PRAGMA user_version=" + std::to_string(version));
    const std::string before = bytes_of(path);
    const std::string v = "history schema version " + std::to_string(version);
    StoreOptions ro;
    ro.path = path;
    ro.read_only = true;  // export
    for (const auto& err : {error_of([&] { check_store(path); }),
                            error_of([&] { repair_store(path); }),
                            error_of([&] { HistoryStore::open(ro); }),
                            error_of([&] { open_store(path); })}) {  // serve
      EXPECT_EQ(err.rfind("version: " + path + ": " + v, 0), 0u) << err;
      EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    }
    EXPECT_EQ(bytes_of(path), before) << "version " << version;
    EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks"), 2);
  }
}

TEST(StoreTools, RepairLeavesANewerBlockFormatAlone) {
  StoreDir dir;
  const std::string path = history(dir);
  // A zstd frame of the one byte 0x04: a block of format 4.
  sql(path,
      "UPDATE blocks SET num = x'28b52ffd2001090000' || x'04' WHERE id = "
      "(SELECT min(id) FROM blocks)");
  StoreCheck c = check_store(path);
  ASSERT_EQ(c.corrupt.size(), 1u);
  EXPECT_TRUE(c.corrupt[0].newer_format) << c.corrupt[0].why;
  EXPECT_EQ(c.corrupt[0].why,
            "block format 4 is newer than this gpudoctor reads (3)");
  const std::string err = error_of([&] { repair_store(path); });
  EXPECT_NE(err.find("nothing moved to quarantine"), std::string::npos) << err;
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks"), 2);
}

TEST(StoreTools, RepairCreatesNoMissingFile) {
  StoreDir dir;
  const std::string path = dir.path("missing.db");
  const std::string err = error_of([&] { repair_store(path); });
  EXPECT_EQ(err, path +
                     ": no such file (db repair opens an existing history "
                     "only)");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(StoreTools, RepairFollowsNoSymlink) {
  StoreDir dir;
  const std::string real = history(dir);
  const std::string before = bytes_of(real);
  const std::string link = dir.path("link.db");
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  EXPECT_EQ(error_of([&] { repair_store(link); }),
            link + ": is a symlink (not followed)");
  EXPECT_EQ(bytes_of(real), before);
  // A dangling link: its target is not created.
  const std::string dangling = dir.path("dangling.db");
  ASSERT_EQ(symlink(dir.path("target.db").c_str(), dangling.c_str()), 0);
  EXPECT_NE(error_of([&] { repair_store(dangling); }), "");
  EXPECT_FALSE(std::filesystem::exists(dir.path("target.db")));
}

TEST(StoreTools, RepairRefusesASymlinkedSideFile) {
  StoreDir dir;
  const std::string path = history(dir);
  const std::string target = dir.path("elsewhere");
  ASSERT_EQ(symlink(target.c_str(), (path + "-journal").c_str()), 0);
  EXPECT_EQ(error_of([&] { repair_store(path); }),
            path + "-journal: is a symlink (not followed)");
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST(StoreTools, RepairOfAHealthyFileStillWorks) {
  StoreDir dir;
  const std::string path = history(dir);
  StoreCheck c = repair_store(path);
  EXPECT_TRUE(c.clean());
  EXPECT_EQ(c.blocks, 2u);
}

}  // namespace
}  // namespace gd
