// NVIDIA driver (NVRM) lines that are not Xid events but worth keeping:
//   NVRM: API mismatch: the client has the version 515.48.07, but
//     (continued on up to 3 more "NVRM:" lines, or on one with "#012")
//   NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)
//   NVRM: GPU 0000:a1:00.0: GPU has fallen off the bus.
//   NVRM: The NVIDIA GPU 0000:b3:00.0
//         NVRM: (PCI ID: 10de:26b5) installed in this system has
//         NVRM: fallen off the bus and is not responding to commands.
//   NVRM: GPU6 _kgspLogRpcTimeout: *** GSP Timeout ***
//   NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed
//   with booting GSP
// and their companions, which belong to the same error and yield nothing:
//   NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5
//   NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::kernellog {

enum class NvrmKind {
  kApiMismatch,
  kRmInitAdapterFailed,
  kFellOffBus,
  kGsp,
  kCompanion,     // part of another line's error: no event of its own
  kGpuHeadline,   // "The NVIDIA GPU <address>" and nothing more: its
                  // message goes on on the next lines
  kContinuation,  // any other NVRM line (only kept after a headline)
};

struct NvrmLine {
  NvrmKind kind = NvrmKind::kContinuation;
  std::string pci;  // the address the line names, normalised; "" none
  // kApiMismatch, kGpuHeadline: the message goes on on the next lines.
  bool continues = false;
};

// nullopt when `message` is not an NVRM line.
std::optional<NvrmLine> parse_nvrm(std::string_view message);

}  // namespace gd::kernellog
