#include "diagnose/config_files.h"

#include <sys/stat.h>

#include <cstdlib>

namespace gd {
namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

ConfigEnv config_env() {
  return {env_text("XDG_CONFIG_HOME"), env_text("HOME")};
}

std::vector<std::string> default_config_files(const ConfigEnv& env) {
  std::vector<std::string> out{kSystemConfigFile};
  std::string base;
  if (!env.xdg_config_home.empty() && env.xdg_config_home.front() == '/')
    base = env.xdg_config_home;
  else if (!env.home.empty() && env.home.front() == '/')
    base = env.home + "/.config";
  if (!base.empty()) out.push_back(base + "/gpudoctor/gpudoctor.toml");
  return out;
}

Config load_config(const std::string& explicit_path, std::string* files) {
  return load_config(explicit_path, config_env(), files);
}

Config load_config(const std::string& explicit_path, const ConfigEnv& env,
                   std::string* files) {
  if (files) files->clear();
  if (!explicit_path.empty()) {
    if (files) *files = explicit_path;
    return Config::from_toml_file(explicit_path);
  }
  return merge_config_files(default_config_files(env), files);
}

Config merge_config_files(const std::vector<std::string>& paths,
                          std::string* files) {
  if (files) files->clear();
  Config merged;
  for (const auto& path : paths) {
    if (!exists(path)) continue;
    merged.merge(Config::from_toml_file(path));
    if (files) *files += (files->empty() ? "" : ", ") + path;
  }
  return merged;
}

}  // namespace gd
