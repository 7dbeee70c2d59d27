// Where the site's policy (config.h) comes from when no --config is given:
// the system's file, then the user's, the user's keys over the system's
// (as git reads /etc/gitconfig, then ~/.config/git/config):
//   /etc/gpudoctor/gpudoctor.toml
//   $XDG_CONFIG_HOME/gpudoctor/gpudoctor.toml ($HOME/.config when unset)
// A file that is not there is skipped; one that is there but cannot be read
// or parsed is an error, as --config's would be: a policy silently ignored
// would change every verdict without a word.
#pragma once

#include <string>
#include <vector>

#include "diagnose/config.h"

namespace gd {

inline constexpr const char* kSystemConfigFile =
    "/etc/gpudoctor/gpudoctor.toml";

// The environment that names the user's file ("" when unset).
struct ConfigEnv {
  std::string xdg_config_home;
  std::string home;
};
ConfigEnv config_env();

// The default files, system first, whether or not they exist. XDG's rule:
// a relative $XDG_CONFIG_HOME is ignored.
std::vector<std::string> default_config_files(const ConfigEnv& env);

// Every file of `paths` that exists, merged in order (a later file's keys
// over an earlier one's); `files` as load_config's.
Config merge_config_files(const std::vector<std::string>& paths,
                          std::string* files = nullptr);

// A config as a command reads it: `explicit_path` alone when it is given,
// else every default file that exists, merged. `files` (when not null)
// gets the files read, ", "-joined ("" none). Throws ConfigError.
Config load_config(const std::string& explicit_path,
                   std::string* files = nullptr);
Config load_config(const std::string& explicit_path, const ConfigEnv& env,
                   std::string* files = nullptr);

}  // namespace gd
