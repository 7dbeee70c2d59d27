// Site policy for diagnosis: every threshold is a named constant in its rule
// (with a comment saying why that value) and can be overridden from a TOML
// file, keyed "<rule-id>.<name>", e.g.
//   [thermal-throttling]
//   min_fraction = 0.3
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

// A config file that cannot be used: malformed, or a value out of range.
// The message is one line, "FILE:LINE[:COL]: what". The CLI maps it to the
// usage exit code (the file is the user's input, like a flag).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Config {
 public:
  Config() = default;
  // Throws ConfigError "FILE:LINE:COL: what" on a malformed file or a
  // value that is not a number, and "FILE:LINE: key 'x': why" on a number
  // outside its key's range (threshold_range).
  static Config from_toml_file(const std::string& path);
  // Same, from text; `source_name` stands for FILE in error messages.
  static Config from_toml_string(std::string_view text,
                                 const std::string& source_name);

  double get(std::string_view key, double default_value) const;
  // The value if the file set it, without counting the key as used.
  std::optional<double> peek(std::string_view key) const;
  void set(std::string key, double value) { values_[std::move(key)] = value; }

  // "FILE:LINE" of the key's value in the file it came from ("" when set
  // in code), for callers that check further (serve's [alerting]).
  std::string where(std::string_view key) const;
  void set_where(std::string key, std::string where) {
    where_[std::move(key)] = std::move(where);
  }

  // `over`'s keys set here, over any of the same name (the user's file
  // over the system's).
  void merge(const Config& over) {
    for (const auto& [k, v] : over.values_) values_[k] = v;
    for (const auto& [k, w] : over.where_) where_[k] = w;
  }

  // Keys set in the file that no rule asked for (after the rules' begin()):
  // almost always a typo, which would otherwise silently change nothing.
  std::vector<std::string> unused_keys() const;

 private:
  std::map<std::string, double, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> where_;
  mutable std::set<std::string, std::less<>> asked_;
};

// The values a threshold accepts, from what its name says it measures:
// *_pct 0..100, *_fraction/_ratio/_share/_r2 0..1, *_samples/_count whole
// numbers 1..10^7, *_s (and keys under a *_s table) seconds up to ten
// years, *_c degrees 0..200, anything else 0..10^15. NaN, infinities and
// negative numbers are never a threshold: a comparison with NaN is always
// false, which would silently switch a rule off.
struct ThresholdRange {
  double min = 0;
  double max = 1e15;
  bool whole = false;     // a count: no fraction
  const char* what = "";  // "a percentage", for the message
};
ThresholdRange threshold_range(std::string_view key);

// "" when `value` is valid for `key`, else why not ("-5 is out of range
// 0..100 (a percentage)").
std::string check_threshold(std::string_view key, double value);

}  // namespace gd
