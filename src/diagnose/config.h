// Site policy for diagnosis: every threshold is a named constant in its rule
// (with a comment saying why that value) and can be overridden from a TOML
// file, keyed "<rule-id>.<name>", e.g.
//   [thermal-throttling]
//   min_fraction = 0.3
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

class Config {
 public:
  Config() = default;
  // Throws std::runtime_error "FILE:LINE:COL: what" on a malformed file or a
  // value that is not a number.
  static Config from_toml_file(const std::string& path);
  // Same, from text; `source_name` stands for FILE in error messages.
  static Config from_toml_string(std::string_view text,
                                 const std::string& source_name);

  double get(std::string_view key, double default_value) const;
  void set(std::string key, double value) { values_[std::move(key)] = value; }

  // Keys set in the file that no rule asked for (after the rules' begin()):
  // almost always a typo, which would otherwise silently change nothing.
  std::vector<std::string> unused_keys() const;

 private:
  std::map<std::string, double, std::less<>> values_;
  mutable std::set<std::string, std::less<>> asked_;
};

}  // namespace gd
