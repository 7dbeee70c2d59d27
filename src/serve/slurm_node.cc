#include "serve/slurm_node.h"

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "common/run_program.h"

namespace gd {
namespace {

// scontrol's output is read up to this (a node line is ~1 KB).
constexpr size_t kMaxOutput = 64 * 1024;

bool has_token(std::string_view state, std::string_view token) {
  // State is FLAG+FLAG..., a trailing '*' (not responding) or '~'/'#'/'%'
  // (power states) on the base state.
  size_t pos = 0;
  while (pos <= state.size()) {
    size_t end = state.find('+', pos);
    if (end == std::string_view::npos) end = state.size();
    std::string_view part = state.substr(pos, end - pos);
    while (!part.empty() &&
           (part.back() == '*' || part.back() == '~' || part.back() == '#' ||
            part.back() == '%' || part.back() == '!' || part.back() == '@' ||
            part.back() == '^' || part.back() == '-'))
      part.remove_suffix(1);
    if (part.substr(0, token.size()) == token) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

SlurmNodeState parse_slurm_node(std::string_view line) {
  while (!line.empty() &&
         (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
    line.remove_suffix(1);
  if (line.substr(0, 9) != "NodeName=")
    throw std::invalid_argument("scontrol show node: no NodeName= line");
  SlurmNodeState s;
  std::string_view head = line;
  if (auto r = line.find(" Reason="); r != std::string_view::npos) {
    std::string_view reason = line.substr(r + 8);
    head = line.substr(0, r);
    // " [root@2026-12-02T06:01:45]": who set it and when.
    if (!reason.empty() && reason.back() == ']') {
      auto open = reason.rfind(" [");
      if (open != std::string_view::npos &&
          reason.find('@', open) != std::string_view::npos)
        reason = reason.substr(0, open);
    }
    s.reason = std::string(reason);
  }
  bool found = false;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t end = head.find(' ', pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view part = head.substr(pos, end - pos);
    if (part.substr(0, 6) == "State=") {
      s.state = std::string(part.substr(6));
      found = true;
    }
    pos = end + 1;
  }
  if (!found || s.state.empty())
    throw std::invalid_argument("scontrol show node: no State=");
  s.drain = has_token(s.state, "DRAIN");
  s.unavailable = s.drain;
  for (std::string_view t : {"DOWN", "FAIL", "MAINT", "REBOOT", "POWER",
                             "FUTURE", "NOT_RESPONDING", "UNKNOWN"})
    if (has_token(s.state, t)) s.unavailable = true;
  if (s.state.find('*') != std::string::npos) s.unavailable = true;
  return s;
}

ScontrolNodeControl::ScontrolNodeControl(std::string program, double deadline_s)
    : program_(std::move(program)), deadline_s_(deadline_s) {}

std::string ScontrolNodeControl::default_program() {
  const char* p = std::getenv("GPUDOCTOR_SCONTROL");
  return p && *p ? p : "scontrol";
}

std::optional<SlurmNodeState> ScontrolNodeControl::show(const std::string& node,
                                                        std::string* error) {
  auto r = run_program({program_, "show", "node", "-o", node}, deadline_s_,
                       kMaxOutput);
  if (!r.ok()) {
    *error = program_failure_text(r, "scontrol show node", deadline_s_);
    return std::nullopt;
  }
  try {
    return parse_slurm_node(r.output.substr(0, r.output.find('\n')));
  } catch (const std::invalid_argument& e) {
    *error = e.what();
    return std::nullopt;
  }
}

bool ScontrolNodeControl::drain(const std::string& node,
                                const std::string& reason, std::string* error) {
  auto r = run_program({program_, "update", "nodename=" + node, "state=drain",
                        "reason=" + reason},
                       deadline_s_, kMaxOutput);
  if (r.ok()) return true;
  *error = program_failure_text(r, "scontrol update", deadline_s_);
  return false;
}

bool ScontrolNodeControl::resume(const std::string& node, std::string* error) {
  auto r = run_program({program_, "update", "nodename=" + node, "state=resume"},
                       deadline_s_, kMaxOutput);
  if (r.ok()) return true;
  *error = program_failure_text(r, "scontrol update", deadline_s_);
  return false;
}

}  // namespace gd
