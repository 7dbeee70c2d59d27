#include "diagnose/xid_recovery_action.h"

#include <charconv>

namespace gd {
namespace {

// The value after "0x" at the start of `s`, if it is a known action.
std::optional<RecoveryAction> action_at(std::string_view s) {
  if (!s.starts_with("0x") && !s.starts_with("0X")) return std::nullopt;
  s.remove_prefix(2);
  unsigned value = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc() || p == s.data() || value > 4) return std::nullopt;
  return static_cast<RecoveryAction>(value);
}

}  // namespace

std::optional<RecoveryActionChange> parse_recovery_action_change(
    std::string_view msg) {
  constexpr std::string_view kChanged = "recovery action changed";
  size_t at = msg.find(kChanged);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = msg.substr(at + kChanged.size());
  // The new value follows the last " to "; the labels in parentheses never
  // contain " to ".
  size_t to = rest.rfind(" to ");
  if (to == std::string_view::npos) return std::nullopt;
  auto new_action = action_at(rest.substr(to + 4));
  if (!new_action) return std::nullopt;
  RecoveryActionChange change;
  change.to = *new_action;
  size_t from = rest.find(" from ");
  if (from != std::string_view::npos && from < to)
    change.from = action_at(rest.substr(from + 6));
  return change;
}

std::string_view recovery_action_label(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::none:
      return "None";
    case RecoveryAction::gpu_reset:
      return "GPU Reset Required";
    case RecoveryAction::node_reboot:
      return "Node Reboot Required";
    case RecoveryAction::drain_p2p:
      return "Drain P2P";
    case RecoveryAction::drain_and_reset:
      return "Drain and Reset";
  }
  return "None";
}

std::string_view recovery_action_name(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::none:
      return "none";
    case RecoveryAction::gpu_reset:
      return "gpu_reset";
    case RecoveryAction::node_reboot:
      return "node_reboot";
    case RecoveryAction::drain_p2p:
      return "drain_p2p";
    case RecoveryAction::drain_and_reset:
      return "drain_and_reset";
  }
  return "none";
}

std::optional<RecoveryAction> recovery_action_from_name(std::string_view name) {
  for (int v = 0; v <= static_cast<int>(RecoveryAction::drain_and_reset); ++v) {
    auto action = static_cast<RecoveryAction>(v);
    if (recovery_action_name(action) == name) return action;
  }
  return std::nullopt;
}

std::string_view recovery_action_fix(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::none:
      return "No recovery action is required any more.";
    case RecoveryAction::gpu_reset:
      return "Reset the GPU: stop its processes, then nvidia-smi -r (or "
             "reboot the node).";
    case RecoveryAction::node_reboot:
      return "Reboot the node: drain it, let running work finish or "
             "checkpoint, then reboot (a GPU reset is not enough).";
    case RecoveryAction::drain_p2p:
      return "Drain peer-to-peer traffic: stop the multi-GPU jobs that use "
             "P2P/NVLink with this GPU, then reset it (nvidia-smi -r); "
             "single-GPU work may continue until then.";
    case RecoveryAction::drain_and_reset:
      return "Drain the GPU and reset it: schedule no new work on it, let "
             "running work finish (it runs at reduced capacity), then "
             "nvidia-smi -r.";
  }
  return "";
}

std::string_view recovery_action_severity(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::none:
      return "info";
    case RecoveryAction::drain_p2p:
    case RecoveryAction::gpu_reset:
    case RecoveryAction::node_reboot:
    case RecoveryAction::drain_and_reset:
      return "critical";
  }
  return "critical";
}

}  // namespace gd
