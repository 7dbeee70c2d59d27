// TOML site policy -> flat "<table>.<key>" numbers (see config.h).
#include "diagnose/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cmath>
#include <stdexcept>

namespace gd {
namespace {

std::string where(const std::string& file, const toml::source_region& src) {
  return fmt::format("{}:{}:{}", file, src.begin.line, src.begin.column);
}

// Walks tables recursively; every leaf must be a number (integer or float).
void flatten(const toml::table& table, const std::string& prefix,
             const std::string& file, Config& out) {
  for (const auto& [key, node] : table) {
    std::string name = prefix.empty() ? std::string(key.str())
                                      : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) {
      flatten(*sub, name, file, out);
    } else if (const auto* i = node.as_integer()) {
      out.set(name, static_cast<double>(i->get()));
    } else if (const auto* f = node.as_floating_point();
               f && std::isfinite(f->get())) {
      out.set(name, f->get());
    } else if (f) {  // TOML spells inf and nan; no threshold is either
      throw std::runtime_error(
          fmt::format("{}: '{}' must be a finite number, not {}",
                      where(file, node.source()), name, f->get()));
    } else {
      throw std::runtime_error(fmt::format(
          "{}: '{}' must be a number (thresholds are numbers)",
          where(file, node.source()), name));
    }
  }
}

Config from_table(const toml::table& table, const std::string& file) {
  Config config;
  flatten(table, "", file, config);
  return config;
}

// toml++ quotes the offending text in its description, line feeds
// included; an error must stay one line.
std::string one_line(std::string_view description) {
  std::string out;
  for (char c : description) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

}  // namespace

Config Config::from_toml_file(const std::string& path) {
  try {
    return from_table(toml::parse_file(path), path);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    if (src.begin.line == 0)  // could not open the file at all
      throw std::runtime_error(
          fmt::format("{}: {}", path, one_line(e.description())));
    throw std::runtime_error(
        fmt::format("{}: {}", where(path, src), one_line(e.description())));
  }
}

Config Config::from_toml_string(std::string_view text,
                                const std::string& source_name) {
  try {
    return from_table(toml::parse(text, source_name), source_name);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(fmt::format(
        "{}: {}", where(source_name, e.source()), one_line(e.description())));
  }
}

double Config::get(std::string_view key, double default_value) const {
  asked_.emplace(key);
  auto it = values_.find(key);
  return it == values_.end() ? default_value : it->second;
}

std::vector<std::string> Config::unused_keys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : values_)
    if (!asked_.contains(key)) out.push_back(key);
  return out;
}

}  // namespace gd
