// The GPU recovery action an Xid 154 line announces:
//   NVRM: Xid (PCI:0000:17:00): 154, GPU recovery action changed from 0x0
//   (None) to 0x1 (GPU Reset Required)
// The values are NVML's GPU recovery action (nvmlDeviceGpuRecoveryAction_t):
// 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset.
#pragma once

#include <optional>
#include <string_view>

namespace gd {

enum class RecoveryAction {
  none = 0,
  gpu_reset = 1,
  node_reboot = 2,
  drain_p2p = 3,
  drain_and_reset = 4,
};

struct RecoveryActionChange {
  std::optional<RecoveryAction> from;  // nullopt: value not readable
  RecoveryAction to = RecoveryAction::none;
};

// The change an Xid 154 message announces; nullopt when the message does not
// say "recovery action changed ... to 0xN" with a known N.
std::optional<RecoveryActionChange> parse_recovery_action_change(
    std::string_view message);

// "GPU Reset Required", "Node Reboot Required", ... (the driver's wording).
std::string_view recovery_action_label(RecoveryAction action);
// The trace's vocabulary: "none", "gpu_reset", "node_reboot", ...
std::string_view recovery_action_name(RecoveryAction action);
// The action a trace's `recovery_action` names; nullopt for "" (unknown) or
// a value this version does not know.
std::optional<RecoveryAction> recovery_action_from_name(std::string_view name);
// What the operator must do, as one sentence.
std::string_view recovery_action_fix(RecoveryAction action);
// info for none; critical for every other action (findings.md: each one
// means the GPU cannot serve its work as it should until it is done; a P2P
// drain stops every multi-GPU job on it).
std::string_view recovery_action_severity(RecoveryAction action);

}  // namespace gd
