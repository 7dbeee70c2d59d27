// TOML site policy -> flat "<table>.<key>" numbers (see config.h).
#include "diagnose/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cmath>
#include <stdexcept>

#include "common/terminal_text.h"

namespace gd {
namespace {

std::string position(const std::string& file, const toml::source_region& src) {
  return fmt::format("{}:{}:{}", file, src.begin.line, src.begin.column);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

// Walks tables recursively; every leaf must be a number (integer or float)
// in the range of its key.
void flatten(const toml::table& table, const std::string& prefix,
             const std::string& file, Config& out) {
  for (const auto& [key, node] : table) {
    // A quoted key can hold any byte: sanitised here, every message that
    // names the key (errors, unknown keys) stays one line.
    const std::string escaped = terminal_safe(key.str());
    std::string name = prefix.empty() ? escaped : prefix + "." + escaped;
    if (const auto* sub = node.as_table()) {
      flatten(*sub, name, file, out);
    } else if (node.is_number()) {
      double v = node.as_integer()
                     ? static_cast<double>(node.as_integer()->get())
                     : node.as_floating_point()->get();
      std::string at = fmt::format("{}:{}", file, node.source().begin.line);
      if (std::string why = check_threshold(name, v); !why.empty())
        throw ConfigError(fmt::format("{}: key '{}': {}", at, name, why));
      out.set(name, v);
      out.set_where(name, at);
    } else {
      throw ConfigError(
          fmt::format("{}: '{}' must be a number (thresholds are numbers)",
                      position(file, node.source()), name));
    }
  }
}

Config from_table(const toml::table& table, const std::string& file) {
  Config config;
  flatten(table, "", file, config);
  return config;
}

}  // namespace

Config Config::from_toml_file(const std::string& path) {
  try {
    return from_table(toml::parse_file(path), path);
  } catch (const toml::parse_error& e) {
    // toml++ quotes the offending text, line feeds included: sanitised, the
    // error stays one line.
    const auto& src = e.source();
    if (src.begin.line == 0)  // could not open the file at all
      throw ConfigError(
          fmt::format("{}: {}", path, terminal_safe(e.description())));
    throw ConfigError(fmt::format("{}: {}", position(path, src),
                                  terminal_safe(e.description())));
  }
}

Config Config::from_toml_string(std::string_view text,
                                const std::string& source_name) {
  try {
    return from_table(toml::parse(text, source_name), source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}: {}", position(source_name, e.source()),
                                  terminal_safe(e.description())));
  }
}

double Config::get(std::string_view key, double default_value) const {
  asked_.emplace(key);
  auto it = values_.find(key);
  return it == values_.end() ? default_value : it->second;
}

std::optional<double> Config::peek(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Config::where(std::string_view key) const {
  auto it = where_.find(key);
  return it == where_.end() ? std::string() : it->second;
}

ThresholdRange threshold_range(std::string_view key) {
  auto dot = key.rfind('.');
  std::string_view name =
      dot == std::string_view::npos ? key : key.substr(dot + 1);
  std::string_view table =
      dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
  constexpr double kTenYears = 3650 * 86400.0;
  if (ends_with(name, "_pct")) return {0, 100, false, "a percentage"};
  for (std::string_view s :
       {"_fraction", "_ratio", "_share", "_r2", "_coverage", "_spread"})
    if (ends_with(name, s)) return {0, 1, false, "a fraction"};
  // input-bound's share of a job's workers that must be saturated.
  if (name == "min_saturated_workers") return {0, 1, false, "a fraction"};
  if (ends_with(name, "_samples") || ends_with(name, "_count"))
    return {1, 1e7, true, "a count"};
  if (ends_with(name, "_per_s")) return {0, 1e15, false, "a rate"};
  // "alerting.for_s.<finding-id>": seconds, named by the table.
  if (ends_with(name, "_s") || ends_with(table, "_s"))
    return {0, kTenYears, false, "seconds, at most ten years"};
  if (ends_with(name, "_c")) return {0, 200, false, "degrees Celsius"};
  return {0, 1e15, false, "a non-negative number"};
}

std::string check_threshold(std::string_view key, double value) {
  if (std::isnan(value)) return "nan is not a number";
  ThresholdRange r = threshold_range(key);
  if (!(value >= r.min && value <= r.max))
    return fmt::format("{} is out of range {}..{} ({})", value, r.min, r.max,
                       r.what);
  if (r.whole && value != std::floor(value))
    return fmt::format("{} is not a whole number ({})", value, r.what);
  return {};
}

std::vector<std::string> Config::unused_keys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : values_)
    if (!asked_.contains(key)) out.push_back(key);
  return out;
}

}  // namespace gd
