// The default config files: the system's, then the user's by XDG's rule,
// the user's keys over the system's.
#include "diagnose/config_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gd {
namespace {

using Files = std::vector<std::string>;

TEST(ConfigFiles, SystemThenUserByXdgsRule) {
  EXPECT_EQ(
      default_config_files({"/x", "/home/a"}),
      (Files{"/etc/gpudoctor/gpudoctor.toml", "/x/gpudoctor/gpudoctor.toml"}));
  EXPECT_EQ(default_config_files({"", "/home/a"}),
            (Files{"/etc/gpudoctor/gpudoctor.toml",
                   "/home/a/.config/gpudoctor/gpudoctor.toml"}));
  // A relative $XDG_CONFIG_HOME is ignored (XDG base directory spec).
  EXPECT_EQ(default_config_files({"rel", "/home/a"}),
            (Files{"/etc/gpudoctor/gpudoctor.toml",
                   "/home/a/.config/gpudoctor/gpudoctor.toml"}));
  EXPECT_EQ(default_config_files({"", ""}),
            (Files{"/etc/gpudoctor/gpudoctor.toml"}));
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gd-config-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

TEST(ConfigFiles, TheUsersKeysOverTheSystems) {
  TempDir d;
  const std::string user =
      d.write("gpudoctor/gpudoctor.toml", "[a]\nx_pct = 7\n\n[b]\ny_pct = 9\n");
  const std::string system =
      d.write("system.toml", "[a]\nx_pct = 1\nz_pct = 2\n");
  std::string files;
  Config c =
      merge_config_files({system, user, d.path() + "/absent.toml"}, &files);
  EXPECT_EQ(files, system + ", " + user);
  EXPECT_EQ(c.peek("a.x_pct"), 7);
  EXPECT_EQ(c.where("a.x_pct"), user + ":2");
  EXPECT_EQ(c.peek("a.z_pct"), 2);
  EXPECT_EQ(c.where("a.z_pct"), system + ":3");
  EXPECT_EQ(c.peek("b.y_pct"), 9);
}

TEST(ConfigFiles, AnExplicitFileIsTheOneRead) {
  TempDir d;
  const std::string only = d.write("only.toml", "[a]\nx_pct = 3\n");
  d.write("gpudoctor/gpudoctor.toml", "[a]\nx_pct = 7\n");
  std::string files;
  Config c = load_config(only, ConfigEnv{d.path(), ""}, &files);
  EXPECT_EQ(files, only);
  EXPECT_EQ(c.peek("a.x_pct"), 3);
  c = load_config("", ConfigEnv{d.path(), ""}, &files);
  EXPECT_EQ(c.peek("a.x_pct"), 7);
}

TEST(ConfigFiles, ABrokenDefaultFileIsAnError) {
  TempDir d;
  d.write("gpudoctor/gpudoctor.toml", "[a]\nx_pct = = 3\n");
  EXPECT_THROW(load_config("", ConfigEnv{d.path(), ""}), ConfigError);
  d.write("gpudoctor/gpudoctor.toml", "[a]\nx_pct = 300\n");
  EXPECT_THROW(load_config("", ConfigEnv{d.path(), ""}), ConfigError);
}

}  // namespace
}  // namespace gd
