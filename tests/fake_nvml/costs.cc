#include "costs.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace fake_nvml {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// "F_v2" -> "F"; anything else unchanged.
std::string_view without_version(std::string_view name) {
  const size_t at = name.rfind("_v");
  if (at == std::string_view::npos || at + 2 == name.size()) return name;
  for (char c : name.substr(at + 2))
    if (!std::isdigit(static_cast<unsigned char>(c))) return name;
  return name.substr(0, at);
}

}  // namespace

std::string CallCosts::key_for(std::string_view name) {
  name = trim(name);
  if (name == "dlopen + nvmlInit") return "nvmlInit";
  if (const size_t paren = name.find('('); paren != std::string_view::npos)
    name = trim(name.substr(0, paren));
  if (name.empty()) return "";
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return "";
  name = without_version(name);
  if (name.starts_with("nvml")) return std::string(name);
  if (name.starts_with("Gpm")) return "nvml" + std::string(name);
  if (name.starts_with("Get")) return "nvmlDevice" + std::string(name);
  return "";
}

CallCosts CallCosts::parse(std::string_view text) {
  CallCosts costs;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{}
                                         : text.substr(eol + 1);
    if (line.empty() || line.front() == '#' ||
        std::isspace(static_cast<unsigned char>(line.front())))
      continue;
    const size_t gap = line.find("  ");
    if (gap == std::string_view::npos) continue;
    const std::string key = key_for(line.substr(0, gap));
    if (key.empty()) continue;
    std::istringstream rest{std::string(line.substr(gap))};
    double value = 0;
    std::string unit;
    if (!(rest >> value >> unit) || value < 0) continue;
    if (unit == "ms") {
      value *= 1000;
    } else if (unit != "us") {
      continue;
    }
    costs.us_[key] = value;
  }
  return costs;
}

CallCosts CallCosts::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the cost file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

double CallCosts::wall_us(std::string_view function) const {
  if (us_.empty()) return 0;
  auto it = us_.find(std::string(without_version(function)));
  return it == us_.end() ? 0 : it->second;
}

void spend_wall_us(double us) {
  if (!(us > 0)) return;
  const auto length = std::chrono::duration<double, std::micro>(us);
  if (us >= 1000) {
    std::this_thread::sleep_for(length);
    return;
  }
  const auto until =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::nanoseconds>(length);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace fake_nvml
