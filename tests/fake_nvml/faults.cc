#include "faults.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "error_codes.h"

namespace fake_nvml {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const json& entry, const std::string& why) {
  throw std::runtime_error("fake-nvml: bad fault " + entry.dump() + ": " + why);
}

int parse_code(const json& entry, const json& v) {
  std::optional<int> code;
  if (v.is_number_integer()) {
    code = v.get<int>();
  } else if (v.is_string()) {
    code = code_from_name(v.get<std::string>());
  }
  if (!code) bad(entry, "unknown NVML return code " + v.dump());
  return *code;
}

double parse_number(const json& entry, const char* key) {
  const json& v = entry.at(key);
  if (!v.is_number() || v.get<double>() < 0)
    bad(entry, std::string(key) + " must be a number >= 0");
  return v.get<double>();
}

}  // namespace

bool function_matches(std::string_view fault_name, std::string_view called) {
  if (fault_name.empty() || fault_name == called) return true;
  if (!called.starts_with(fault_name)) return false;
  std::string_view rest = called.substr(fault_name.size());
  if (rest.size() < 3 || !rest.starts_with("_v")) return false;
  for (char c : rest.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Faults Faults::parse(std::string_view text) {
  Faults f;
  if (text.empty()) return f;
  json list = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded())
    throw std::runtime_error("fake-nvml: \"faults\" is not valid JSON");
  if (list.is_null()) return f;
  if (!list.is_array())
    throw std::runtime_error("fake-nvml: \"faults\" must be a list");
  for (const json& e : list) {
    if (!e.is_object()) bad(e, "not an object");
    if (e.contains("init_return")) {
      f.init_return_ = parse_code(e, e["init_return"]);
      continue;
    }
    if (e.contains("missing_symbols")) {
      const json& names = e["missing_symbols"];
      if (!names.is_array()) bad(e, "missing_symbols must be a list of names");
      for (const json& n : names) {
        if (!n.is_string()) bad(e, "missing_symbols must be a list of names");
        f.missing_symbols_.insert(n.get<std::string>());
      }
      continue;
    }
    std::optional<int> gpu;
    if (e.contains("gpu") && !e["gpu"].is_null()) {
      if (!e["gpu"].is_number_integer()) bad(e, "gpu must be an integer");
      gpu = e["gpu"].get<int>();
    }
    if (e.contains("lost_after_s")) {
      if (!gpu) bad(e, "lost_after_s needs a gpu");
      f.lost_after_.emplace_back(*gpu, parse_number(e, "lost_after_s"));
      continue;
    }
    if (e.contains("gone_after_s")) {
      if (!gpu) bad(e, "gone_after_s needs a gpu");
      f.gone_after_.emplace_back(*gpu, parse_number(e, "gone_after_s"));
      continue;
    }
    FunctionFault ff;
    ff.gpu = gpu;
    if (e.contains("function")) {
      if (!e["function"].is_string()) bad(e, "function must be a string");
      ff.function = e["function"].get<std::string>();
    }
    if (e.contains("after_s")) ff.after_s = parse_number(e, "after_s");
    if (e.contains("until_s")) ff.until_s = parse_number(e, "until_s");
    bool any = false;
    if (e.contains("return")) {
      ff.return_code = parse_code(e, e["return"]);
      any = true;
    }
    if (e.contains("hang_s")) {
      ff.hang_s = parse_number(e, "hang_s");
      any = true;
    }
    if (e.contains("latency_ms")) {
      ff.latency_ms = parse_number(e, "latency_ms");
      any = true;
    }
    if (!any) {
      bad(e,
          "expected one of return, hang_s, latency_ms, lost_after_s, "
          "gone_after_s, init_return, missing_symbols");
    }
    f.function_faults_.push_back(std::move(ff));
  }
  return f;
}

FaultDecision Faults::decide(std::string_view function, int gpu,
                             double s) const {
  FaultDecision d;
  if (symbol_missing(function)) {
    d.return_code = kFunctionNotFound;
    return d;
  }
  for (const auto& ff : function_faults_) {
    if (!function_matches(ff.function, function)) continue;
    if (ff.gpu && *ff.gpu != gpu) continue;
    if (ff.after_s && s < *ff.after_s) continue;
    if (ff.until_s && s >= *ff.until_s) continue;
    d.sleep_s += ff.hang_s + ff.latency_ms / 1000.0;
    if (ff.return_code && !d.return_code) d.return_code = ff.return_code;
  }
  return d;
}

std::optional<double> Faults::lost_after_s(int gpu) const {
  std::optional<double> earliest;
  for (const auto& [g, s] : lost_after_) {
    if (g == gpu && (!earliest || s < *earliest)) earliest = s;
  }
  return earliest;
}

std::optional<double> Faults::gone_after_s(int gpu) const {
  std::optional<double> earliest;
  for (const auto& [g, s] : gone_after_) {
    if (g == gpu && (!earliest || s < *earliest)) earliest = s;
  }
  return earliest;
}

unsigned Faults::gone_count(double s) const {
  std::set<int> gone;
  for (const auto& [g, after] : gone_after_) {
    if (s >= after) gone.insert(g);
  }
  return static_cast<unsigned>(gone.size());
}

bool Faults::symbol_missing(std::string_view function) const {
  return missing_symbols_.find(function) != missing_symbols_.end();
}

}  // namespace fake_nvml
