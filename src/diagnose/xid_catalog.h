// gpudoctor's own Xid catalogue: for each NVIDIA Xid code, what it means,
// which class of cause it points at, how severe it is for a GPU server, and
// what to do. Built from the facts in NVIDIA's public Xid documentation
// (Xid catalogue, Xid error listing, GPU debug guidelines, memory error
// management), paraphrased.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

enum class XidCause {
  application,  // the program did something illegal; GPU is healthy
  driver,       // driver / system software
  firmware,     // GSP, PMU, SEC2 micro-controllers
  hardware,     // the board itself
  memory,       // ECC / frame-buffer memory
  pcie_bus,     // the PCIe link or the host bus
  nvlink,       // NVLink / NVSwitch / C2C fabric
  power,        // power delivery
  thermal,
  configuration,  // site or VM configuration
  informational,  // side effect or notice; acts through another Xid
  unknown,        // not in the catalogue
};

struct XidInfo {
  int code = 0;
  const char* mnemonic = "";
  XidCause cause = XidCause::unknown;
  const char* severity = "warning";  // critical | warning | info
  const char* meaning = "";          // one line
  const char* action = "";           // what to do, immediate then if repeated
};

// Every catalogued code, ascending.
const std::vector<XidInfo>& xid_catalog();
// nullptr for a code that is not catalogued.
const XidInfo* find_xid(int code);
// "application", "pcie-bus", ...
std::string_view xid_cause_name(XidCause cause);

// Severity of one Xid event: the catalogue's, refined by the message where
// the code alone is ambiguous (Xid 154 "to 0x0 (None)" is informational;
// NVLink5 Xids 144-150 marked "Nonfatal" are warnings). Unknown codes are
// warnings: something the driver thought worth logging, cause unknown.
std::string xid_severity(int code, std::string_view text);

// What the window shows on the GPU that logged the Xid, for the codes whose
// severity NVIDIA's guidance makes depend on it (xid-error fills it in).
struct XidContext {
  // Uncorrectable ECC counted on this GPU in the window (volatile DBE count,
  // or an Xid 48/94/95/140/171/172 of its own).
  bool uncorrectable_ecc = false;
  // Row remapping failed (NVML's remap failure flag, or Xid 64).
  bool remap_failure = false;
};

// As above, refined by the context: Xid 63 (a row recorded for remapping)
// with neither uncorrectable errors nor a remap failure is a pending remap
// from correctable errors, a warning; with either it stays critical.
std::string xid_severity(int code, std::string_view text,
                         const XidContext& context);

// True for Xid 63 in a context where it only means a remap is pending.
bool xid_is_pending_remap(int code, const XidContext& context);

}  // namespace gd
