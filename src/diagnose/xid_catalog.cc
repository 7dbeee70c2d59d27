// The Xid table. Severity policy (findings.md): an application fault that
// leaves the GPU healthy is a warning (13, 31, 43, ...); anything pointing at
// the driver, firmware, hardware, memory, PCIe, NVLink, power or thermal
// state of the GPU is critical (48, 63, 64, 74, 79, 92, 94, 95, 119, 120,
// ...); notices that only accompany another Xid are info. Where NVIDIA's
// immediate action for a non-application code is "ignore" or "restart the
// app" and nothing about the GPU's health is implied, the code is a warning.
//
// Where each severity comes from:
// - a row's severity: the cause class and the immediate action ("resolution
//   bucket") of NVIDIA's Xid catalogue (Analyzing Xid Errors with the Xid
//   Catalog), cross-checked with the cause matrix of NVIDIA's older Xid
//   error listing and the per-Xid advice of NVIDIA's GPU debug guidelines;
//   rows whose severity needs more than the code say so beside the row.
// - by message (xid_severity): Xid 154 follows the recovery action it
//   announces (NVML's GPU recovery action values, xid_recovery_action.h);
//   NVLink5 Xids 144-150 say Fatal or Nonfatal.
// - by context (xid_severity with XidContext): Xid 63 without uncorrectable
//   errors or a remap failure is a pending remap, a warning (debug
//   guidelines; NVIDIA's memory error management guide: the remap applies at
//   the next reset). Xid 119/120 on several GPUs of one host keep their
//   severity but point at the driver / GSP firmware (the catalogue's
//   investigatory action is INVESTIGATE_SW; the R525 GSP timeout was a driver
//   bug fixed in a later release): xid-error says so.
#include "diagnose/xid_catalog.h"

#include <algorithm>

#include "diagnose/xid_recovery_action.h"

namespace gd {
namespace {

using C = XidCause;

struct Row {
  int first, last;  // inclusive code range sharing one description
  const char* mnemonic;
  C cause;
  const char* severity;
  const char* meaning;
  const char* action;
};

constexpr const char* kCopyEngineAction =
    "Restart the application. If copy-engine errors repeat on this GPU with "
    "different programs, collect an nvidia-bug-report and contact support.";
constexpr const char* kVideoEngineAction =
    "Restart the application using the video/JPEG/security engine; if it "
    "repeats with known-good software, contact support.";

// Wording is gpudoctor's own; the facts come from NVIDIA's Xid catalogue and
// debug guidelines.
const Row kRows[] = {
    {8, 8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", C::driver, "warning",
     "the GPU stopped processing work (channel idle timeout)",
     "Restart the application. If it repeats, check GPU temperature and PCIe "
     "errors around the event and contact support with an nvidia-bug-report."},
    {11, 11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW", C::application, "warning",
     "the GPU received an invalid or corrupted command stream",
     "Restart the application; most likely it passed bad data. Investigate "
     "the program (the pid in the log line names it)."},
    {13, 13, "ROBUST_CHANNEL_GR_EXCEPTION", C::application, "warning",
     "graphics/compute engine exception: the program went out of bounds, hit "
     "an illegal instruction or illegal register (rarely a HW or driver bug)",
     "Restart the application and debug it (compute-sanitizer memcheck or "
     "cuda-gdb). If the same GPC/TPC/SM location repeats across different "
     "programs, run DCGM diagnostics (dcgmi diag -r 3) on this GPU: then it "
     "may be hardware."},
    {14, 14, "ROBUST_CHANNEL_FAKE_ERROR", C::informational, "info",
     "an error injected on purpose from user space (testing)",
     "Nothing to do unless nobody injected errors on purpose."},
    {25, 25, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", C::application, "warning",
     "the GPU received an invalid command stream",
     "Restart the application and check it for misuse of the CUDA/graphics "
     "API (the pid in the log line names it)."},
    {31, 31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", C::application, "warning",
     "GPU memory page fault: a kernel accessed an address it does not own",
     "Restart the application and debug it (compute-sanitizer memcheck). "
     "If MMU faults repeat on this one GPU with different programs, run DCGM "
     "diagnostics on it; if they follow the program to other GPUs, it is the "
     "program."},
    {32, 32, "ROBUST_CHANNEL_PBDMA_ERROR", C::pcie_bus, "critical",
     "the DMA engine that carries commands to the GPU over PCIe saw corrupted "
     "data; usually poor PCIe signal quality, not the application",
     "Check PCIe health: AER messages in the kernel log, pcie_replay_total, "
     "the riser/slot seating. Restart the application; if it repeats, move "
     "the card or contact the hardware vendor."},
    {37, 37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", C::driver,
     "warning", "driver firmware received a method it does not implement",
     "Usually harmless; if it repeats, check the application and driver "
     "version and report it."},
    {38, 38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", C::firmware,
     "critical", "driver firmware watchdog timed out",
     "Reset the GPU (or reboot) and update the driver; contact support with an "
     "nvidia-bug-report if it repeats."},
    {39, 41, "ROBUST_CHANNEL_CE_ERROR", C::driver, "warning",
     "copy-engine exception (application, driver or hardware)",
     kCopyEngineAction},
    {43, 43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", C::application,
     "warning",
     "the application hit a software fault and its GPU work was stopped; the "
     "GPU itself stays healthy",
     "Restart and debug the application (the pid in the log line names it); "
     "no GPU reset is needed."},
    {44, 44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", C::driver, "warning",
     "graphics engine fault during a context switch",
     "Usually recoverable; if it repeats, update the driver and contact "
     "support with an nvidia-bug-report."},
    {45, 45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", C::informational, "info",
     "the driver tore down a program's GPU channels (Ctrl-C, kill, GPU reset, "
     "or clean-up after another error)",
     "Follow the other Xid logged around it, if any. Seen alone on an "
     "NVSwitch system it can mean Fabric Manager stopped: restart "
     "nvidia-fabricmanager."},
    {46, 46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", C::driver, "critical",
     "the GPU stopped processing work (GPU timeout)",
     "Reset the GPU (nvidia-smi -r, after stopping its processes) or reboot; "
     "contact support if it repeats."},
    {48, 48, "ROBUST_CHANNEL_GPU_ECC_DBE", C::memory, "critical",
     "uncorrectable (double-bit) ECC error in GPU memory; the application "
     "using it gets an error",
     "Drain the GPU, let running work finish, then reset it (or reboot) to "
     "clear the error and apply row remapping. If it is not followed by Xid "
     "63/64, run field diagnostics; repeated DBEs are an RMA case."},
    {54, 54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", C::power, "critical",
     "the board's auxiliary power is not connected; it runs at reduced clocks",
     "Power the node down and check the GPU's auxiliary power cables and "
     "board seating."},
    {60, 60, "SEC2_ERROR", C::driver, "warning",
     "exception in the security engine (SEC2)", kVideoEngineAction},
    {61, 61, "PMU_BREAKPOINT", C::firmware, "critical",
     "internal micro-controller (PMU) breakpoint/warning (pre-Ampere GPUs)",
     "Reset the GPU and report it with an nvidia-bug-report."},
    {62, 62, "PMU_HALT_ERROR", C::firmware, "critical",
     "internal micro-controller (PMU) halted",
     "Reset the GPU (often announced by Xid 154 'GPU Reset Required'); if it "
     "repeats, check cooling and contact support."},
    // Critical with Xid 48 / a remap failure; a warning after correctable
    // errors only (see xid_severity with context).
    {63, 63, "INFOROM_DRAM_RETIREMENT_EVENT", C::memory, "critical",
     "a bad memory row was recorded for remapping (Ampere+) or a page for "
     "retirement (older GPUs); it takes effect only after a GPU reset",
     "Reset the GPU at the next chance (drain first if it came with Xid 48; "
     "from single-bit errors it can wait for a convenient reboot)."},
    // The catalogue: RESET_GPU -> CONTACT_SUPPORT; the debug guidelines: a
    // failed remap is an RMA criterion. Critical in every context.
    {64, 64, "INFOROM_DRAM_RETIREMENT_FAILURE", C::memory, "critical",
     "recording a memory row remap / page retirement FAILED",
     "Drain the node and reset the GPU or reboot now; a remapping failure is "
     "an RMA criterion: run field diagnostics and contact the vendor."},
    {66, 67, "ROBUST_CHANNEL_FECS_ERR_ACCESS_VIOLATION", C::driver, "warning",
     "illegal register access by the driver",
     "Usually recoverable; update the driver and report it if it repeats."},
    {68, 68, "NVDEC_ERROR", C::driver, "warning",
     "exception in the video decoder engine", kVideoEngineAction},
    {69, 69, "ROBUST_CHANNEL_GR_CLASS_ERROR", C::application, "warning",
     "graphics engine class error",
     "Restart the application and check its use of the API."},
    {70, 73, "ROBUST_CHANNEL_CE_ERROR", C::driver, "warning",
     "copy-engine exception (application, driver or hardware)",
     kCopyEngineAction},
    {74, 74, "NVLINK_ERROR", C::nvlink, "critical",
     "error on an NVLink connection to another GPU or NVSwitch (the link, or "
     "the device at its far end)",
     "Check `nvidia-smi nvlink -s` / `-e` for the failing link and whether a "
     "peer GPU logged errors first; reset the GPU or reboot to clear it. If it "
     "persists after reset, check the NVLink bridge/baseboard seating and "
     "contact the vendor."},
    {75, 77, "ROBUST_CHANNEL_CE_ERROR", C::driver, "warning",
     "copy-engine exception (application, driver or hardware)",
     kCopyEngineAction},
    {78, 78, "VGPU_START_ERROR", C::configuration, "critical",
     "a vGPU could not start (guest/host driver mismatch or unsupported vGPU "
     "type)",
     "Make the guest and host vGPU drivers compatible versions and check the "
     "vGPU type is supported."},
    {79, 79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", C::pcie_bus,
     "critical",
     "the driver can no longer reach the GPU over PCIe (it fell off the bus)",
     "Drain the node and reboot it (the GPU does not come back without). Check "
     "the kernel log for PCIe AER errors, the BMC event log, power supply and "
     "temperatures before the event, and the system BIOS version; if it "
     "repeats, reseat the card and contact the vendor."},
    {80, 80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", C::pcie_bus, "critical",
     "data sent to the GPU arrived corrupted",
     "Check PCIe health (AER errors, replay counter, seating); restart the "
     "application; move or replace the card if it repeats."},
    {82, 84, "NVJPG_NVDEC_ERROR", C::driver, "warning",
     "exception in a video/JPEG engine", kVideoEngineAction},
    {85, 85, "ROBUST_CHANNEL_CE_ERROR", C::driver, "warning",
     "copy-engine exception (application, driver or hardware)",
     kCopyEngineAction},
    {88, 89, "NVDEC_ERROR", C::driver, "warning",
     "exception in a video decoder engine", kVideoEngineAction},
    {92, 92, "EXCESSIVE_SBE_INTERRUPTS", C::memory, "critical",
     "unusually high rate of single-bit (corrected) ECC errors",
     "Run field diagnostics on this GPU and watch the ECC counters; an "
     "excessive error rate is an RMA case."},
    {93, 93, "INFOROM_ERASE_LIMIT_EXCEEDED", C::configuration, "warning",
     "an InfoROM update was blocked by a wear limit set on purpose",
     "Clear the InfoROM limit with nvflash; contact support if that does not "
     "help."},
    {94, 94, "ROBUST_CHANNEL_CONTAINED_ERROR", C::memory, "critical",
     "contained uncorrectable memory error: only the application that touched "
     "the bad memory was stopped",
     "Restart the affected application (other work keeps running); reset the "
     "GPU when convenient to apply the row remap."},
    {95, 95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", C::memory, "critical",
     "uncontained uncorrectable memory error: every application on the GPU "
     "may be affected",
     "Stop the GPU's work and reset the GPU before restarting anything: with "
     "MIG, drain the other instances first; without MIG, reboot the node "
     "now."},
    {96, 105, "NVDEC_NVJPG_SEC2_ERROR", C::driver, "warning",
     "exception in a video/JPEG/security engine", kVideoEngineAction},
    {109, 109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", C::driver, "critical",
     "a context switch timed out (driver, application, hardware or thermal)",
     "Reset the GPU; look for a GSP/firmware Xid (119/120/62) or thermal "
     "events just before; update the driver and contact support if it "
     "repeats."},
    {110, 110, "SEC_FAULT_ERROR", C::hardware, "critical",
     "security fault (rare unless the hardware failed)",
     "Undo recent hardware changes and cold-reset the node; contact the "
     "vendor if it persists."},
    // 119/120 on several GPUs at once: the driver / GSP firmware (xid-error).
    {119, 119, "GSP_RPC_TIMEOUT", C::firmware, "critical",
     "the GPU System Processor firmware (GSP) did not answer a driver call in "
     "time",
     "Reset the GPU or power-cycle the node. Known in early R525 drivers "
     "(fixed in 525.105.17): update the driver; if it persists on a current "
     "driver, contact support."},
    {120, 120, "GSP_ERROR", C::firmware, "critical",
     "an error in code running on the GPU System Processor (GSP)",
     "Reset the GPU or power-cycle the node; update the driver; contact "
     "support if it repeats."},
    {121, 121, "C2C_ERROR", C::nvlink, "warning",
     "corrected errors on the chip-to-chip link to the Grace CPU",
     "No immediate impact; reset the GPU at the next service window to retrain "
     "the link; contact support if it keeps repeating."},
    {126, 135, "ROBUST_CHANNEL_CE_ERROR", C::driver, "warning",
     "copy-engine exception (application, driver or hardware)",
     kCopyEngineAction},
    {136, 136, "ALI_TRAINING_FAIL", C::nvlink, "critical",
     "NVLink link training failed",
     "Reset the GPU; if training keeps failing, check link signal integrity "
     "(seating, baseboard) and contact the vendor."},
    {137, 137, "NVLINK_PRIV_ERR", C::application, "warning",
     "remote MMU fault over NVLink (e.g. an illegal peer-to-peer access)",
     "Debug the application like an MMU fault (Xid 31); if it repeats on one "
     "link with different programs, check the NVLink fabric."},
    {140, 140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", C::memory, "critical",
     "uncorrectable memory errors the driver could not mark for remapping",
     "Reset the GPU; contact the vendor if it persists after the reset."},
    {143, 143, "GPU_INIT_ERROR", C::driver, "critical",
     "the GPU failed to initialise",
     "Reset the GPU or reboot; contact support if it persists."},
    {144, 150, "NVLINK5_UNIT_ERROR", C::nvlink, "critical",
     "NVLink5 unit error (SAW/RLW/TLW/TREX/NVLPW/NETIR/MSE); the message says "
     "Fatal or Nonfatal and carries the registers to decode",
     "Decode the first two registers with NVIDIA's Xid 144-150 decode sheet. "
     "Fatal: reset the GPU; for link-down errors also check the peer device. "
     "Repeated on one link: check cabling/tray seating and contact support."},
    // Severity follows the announced action (xid_recovery_action.h).
    {154, 154, "GPU_RECOVERY_ACTION_CHANGED", C::informational, "critical",
     "the driver announces the recovery action another Xid requires (none, "
     "drain peer-to-peer, drain and reset, GPU reset, node reboot)",
     "Do what the message says: 'GPU Reset Required' -> stop the GPU's work "
     "and reset it; 'Node Reboot Required' -> drain and reboot the node; "
     "'Drain P2P' -> stop peer-to-peer work first."},
    {155, 155, "NVLINK_SW_DEFINED_ERROR", C::nvlink, "critical",
     "an NVLink link went down in a software-defined way (incl. sleep)",
     "Reset the GPU and find which software brought the link down."},
    {156, 156, "RESOURCE_RETIREMENT_EVENT", C::memory, "critical",
     "a failing GPU resource was recorded for retirement; applied at reset",
     "Reset the GPU at the next chance to apply it."},
    {157, 157, "RESOURCE_RETIREMENT_FAILURE", C::memory, "critical",
     "a failing GPU resource could not be retired (no spares left)",
     "Work can continue but the error may return: plan a replacement and "
     "contact support."},
    {158, 158, "GPU_FATAL_TIMEOUT", C::hardware, "critical",
     "fatal GPU timeout", "Reset the GPU; contact support if it repeats."},
    {159, 159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", C::nvlink, "warning",
     "non-data error on the chip-to-chip (C2C) interface",
     "If UVM or vGPU is in use, reset the GPU; otherwise it can be ignored; "
     "report it if it appears alone."},
    {160, 160, "CHANNEL_RETIREMENT_EVENT", C::driver, "warning",
     "a GPU channel was retired (NVIDIA's memory docs instead describe 160 as "
     "memory marked for repair)",
     "Nothing urgent; if it repeats, investigate the software and report it."},
    {161, 161, "CHANNEL_RETIREMENT_FAILURE", C::driver, "critical",
     "a GPU channel could not be retired",
     "Reset the GPU and investigate the software that triggered it."},
    {162, 162, "PSHC_REENGAGED", C::power, "info",
     "power-smoothing circuitry engaged again", "Nothing to do."},
    {163, 163, "PSHC_DISENGAGED", C::power, "warning",
     "power-smoothing circuitry disengaged",
     "Fix any thermal events first, then reload the driver or reset the GPU."},
    {164, 165, "PSHC_LIFETIME", C::power, "warning",
     "power-smoothing circuitry is near or at the end of its lifetime",
     "Expect larger power swings; plan to replace the GPU if power smoothing "
     "is required at this site."},
    {167, 167, "PCIE_FATAL_TIMEOUT", C::pcie_bus, "critical",
     "fatal PCIe timeout",
     "Check PCIe AER errors and seating; reboot the node; contact the vendor "
     "if it repeats."},
    {168, 168, "REDUCED_GPU_MEMORY_CAPACITY", C::memory, "warning",
     "errors in the write-protected memory region (only with ECC disabled)",
     "Enable ECC (so rows can be remapped) or reboot."},
    {169, 169, "SEC2_HALT_ERROR", C::firmware, "critical",
     "internal security micro-controller halted",
     "Reset the GPU; contact support if it repeats."},
    {171, 172, "UNCORRECTABLE_DRAM_SRAM_ERROR", C::memory, "critical",
     "companion of Xid 48 telling whether the uncorrectable error was in DRAM "
     "(171) or SRAM (172)",
     "Follow the Xid 48 guidance: drain and reset the GPU. For SRAM errors "
     "check the SRAM error threshold flag and run field diagnostics if set."},
};

std::vector<XidInfo> build() {
  std::vector<XidInfo> out;
  for (const Row& r : kRows)
    for (int code = r.first; code <= r.last; ++code)
      out.push_back(
          {code, r.mnemonic, r.cause, r.severity, r.meaning, r.action});
  std::sort(out.begin(), out.end(),
            [](const XidInfo& a, const XidInfo& b) { return a.code < b.code; });
  return out;
}

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

}  // namespace

const std::vector<XidInfo>& xid_catalog() {
  static const std::vector<XidInfo> table = build();
  return table;
}

const XidInfo* find_xid(int code) {
  const auto& t = xid_catalog();
  auto it =
      std::lower_bound(t.begin(), t.end(), code,
                       [](const XidInfo& x, int c) { return x.code < c; });
  return it != t.end() && it->code == code ? &*it : nullptr;
}

std::string_view xid_cause_name(XidCause cause) {
  switch (cause) {
    case C::application:
      return "application";
    case C::driver:
      return "driver";
    case C::firmware:
      return "firmware";
    case C::hardware:
      return "hardware";
    case C::memory:
      return "memory";
    case C::pcie_bus:
      return "pcie-bus";
    case C::nvlink:
      return "nvlink";
    case C::power:
      return "power";
    case C::thermal:
      return "thermal";
    case C::configuration:
      return "configuration";
    case C::informational:
      return "informational";
    case C::unknown:
      break;
  }
  return "unknown";
}

std::string xid_severity(int code, std::string_view text) {
  const XidInfo* info = find_xid(code);
  if (!info) return "warning";
  // "GPU recovery action changed from 0x0 (None) to 0x0 (None)" or back to
  // None after recovery: nothing is required any more.
  // Source: the value list of NVML's GPU recovery action; see
  // recovery_action_severity for the severity of each action.
  if (code == 154) {
    if (auto change = parse_recovery_action_change(text))
      return std::string(recovery_action_severity(change->to));
    auto to = text.rfind(" to ");
    if (to != std::string_view::npos && contains(text.substr(to), "(None)"))
      return "info";
    return "critical";
  }
  // NVLink5 errors say whether they were fatal; non-fatal ones are recovered.
  if (code >= 144 && code <= 150 && contains(text, "Nonfatal"))
    return "warning";
  return info->severity;
}

bool xid_is_pending_remap(int code, const XidContext& context) {
  return code == 63 && !context.uncorrectable_ecc && !context.remap_failure;
}

std::string xid_severity(int code, std::string_view text,
                         const XidContext& context) {
  // NVIDIA's catalogue: Xid 63 is IGNORE -> IGNORE; the debug guidelines and
  // the memory error management guide: a remap recorded from correctable
  // errors waits for a convenient reset, with Xid 48 (uncorrectable) the GPU
  // must be drained and reset now.
  if (xid_is_pending_remap(code, context)) return "warning";
  return xid_severity(code, text);
}

}  // namespace gd
