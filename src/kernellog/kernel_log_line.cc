// KernelLogClassifier: kernel-log lines, in order -> events; and
// parse_kernel_log_line, one line on its own.
#include "common/ascii_text.h"
#include "common/pci_bus_id.h"
#include "common/text_cap.h"
#include "kernellog/aer_line.h"
#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"
#include "kernellog/nvrm_line.h"
#include "kernellog/oom_line.h"
#include "kernellog/pci_address.h"
#include "kernellog/sxid_line.h"
#include "kernellog/xid_line.h"

namespace gd {

namespace {

// The event keeps at most kKernelLineMax bytes of the line, and says how
// much it left out.
std::string capped_text(std::string_view text) {
  std::string out(text.substr(0, kKernelLineMax));
  if (text.size() > kKernelLineMax)
    cap_text(out, kKernelLineMax, text.size() - kKernelLineMax);
  return out;
}

// An event about the device at `address`: its GPU index when NVML knows
// it, else the address itself (a GPU NVML does not list, a switch).
Event event_at(const char* kind, std::string_view address,
               std::string_view text, const PciIndex& pci) {
  Event e;
  e.kind = kind;
  if (!address.empty()) {
    e.gpu = pci.find(address);
    if (!e.gpu) e.pci_address = std::string(address);
  }
  e.text = capped_text(text);
  return e;
}

// "0000:07:00.0" -> "0000:07:00", the form Xid lines print.
std::string device_of(std::string_view address) {
  return std::string(address.substr(0, address.rfind('.')));
}

// An Xid 79 names the GPU that fell off; the driver's own "GPU has fallen
// off the bus" line for the same GPU follows within a few lines.
constexpr int kXid79CompanionLines = 16;
// An "API mismatch" message goes on over at most 3 more lines, a "The
// NVIDIA GPU <address>" headline over 2.
constexpr int kApiMismatchLines = 3;
constexpr int kHeadlineLines = 2;

}  // namespace

KernelLogClassifier::Result KernelLogClassifier::classify(std::string_view line,
                                                          const PciIndex& pci) {
  // The event text is the line as the user would see it in dmesg/journal,
  // trimmed; a raw /dev/kmsg record loses only its "PRI,SEQ,USEC,FLAGS;"
  // header, which is bookkeeping, not part of the message.
  std::string_view text = trim(line);
  text.remove_prefix(kernellog::kmsg_header_length(text));
  std::string_view msg = kernellog::kernel_message(text);
  Result r;
  if (msg.empty()) {  // a blank line says nothing that could be missed
    r.classified = true;
    return r;
  }
  if (lines_since_xid79_ < kXid79CompanionLines) ++lines_since_xid79_;
  const int lines_to_follow = nvrm_lines_to_follow_;
  nvrm_lines_to_follow_ = 0;
  const bool aer_was_open = aer_.open;
  aer_.open = false;

  if (auto x = kernellog::parse_xid(msg)) {
    Event e;
    e.kind = "xid";
    e.gpu = pci.find(x->pci);
    e.code = x->code;
    if (x->pid) e.pid = *x->pid;
    e.text = capped_text(text);
    if (x->code == 79) {
      if (auto dbd = canonical_pci_device(x->pci)) {
        xid79_pci_ = *dbd;
        lines_since_xid79_ = 0;
      }
    }
    r.event = std::move(e);
  } else if (auto o = kernellog::parse_oom_kill(msg)) {
    Event e;
    e.kind = "oom_kill";
    e.pid = o->pid;
    e.text = capped_text(text);
    r.event = std::move(e);
  } else if (auto s = kernellog::parse_sxid(msg)) {
    // Detail lines of the error whose event was just made add nothing.
    if (!(s->detail && s->pci == sxid_pci_ && s->code == sxid_code_)) {
      Event e = event_at(kEventSxid, s->pci, text, pci);
      e.gpu.reset();  // a switch, never a GPU
      e.pci_address = s->pci;
      e.code = s->code;
      r.event = std::move(e);
      sxid_pci_ = s->pci;
      sxid_code_ = s->code;
    }
  } else if (auto n = kernellog::parse_nvrm(msg)) {
    using kernellog::NvrmKind;
    switch (n->kind) {
      case NvrmKind::kContinuation:
        if (lines_to_follow == 0) return r;  // unclassified NVRM chatter
        nvrm_lines_to_follow_ = lines_to_follow - 1;
        break;
      case NvrmKind::kGpuHeadline:
        nvrm_headline_pci_ = n->pci;
        nvrm_lines_to_follow_ = kHeadlineLines;
        break;
      case NvrmKind::kCompanion:
        break;
      case NvrmKind::kFellOffBus: {
        std::string at = n->pci;
        if (at.empty() && lines_to_follow > 0) at = nvrm_headline_pci_;
        const bool after_xid79 = !at.empty() && device_of(at) == xid79_pci_ &&
                                 lines_since_xid79_ < kXid79CompanionLines;
        if (!after_xid79) r.event = event_at(kEventNvrm, at, text, pci);
        break;
      }
      case NvrmKind::kApiMismatch:
        if (n->continues) nvrm_lines_to_follow_ = kApiMismatchLines;
        r.event = event_at(kEventNvrm, n->pci, text, pci);
        break;
      case NvrmKind::kRmInitAdapterFailed:
      case NvrmKind::kGsp:
        r.event = event_at(kEventNvrm, n->pci, text, pci);
        break;
    }
  } else if (auto a = kernellog::parse_aer(msg)) {
    using kernellog::AerLineKind;
    // The GPU a line is about: the device it names, or the GPU right below
    // that port; a device bound to the nvidia driver is a GPU even when the
    // PCI scan did not list it.
    auto gpu_of = [&](const std::string& address,
                      std::string_view driver) -> std::string {
      if (address.empty()) return "";
      if (auto g = pci.gpu_at(address)) return *g;
      return driver == "nvidia" ? address : "";
    };
    std::string gpu;
    bool same_error = false;
    if (a->kind == AerLineKind::kReceived) {
      gpu = gpu_of(a->source, "");
      if (gpu.empty()) gpu = gpu_of(a->device, a->driver);
    } else if (a->kind == AerLineKind::kBusError) {
      same_error = aer_was_open && a->severity == aer_.severity;
      if (!(same_error && aer_.kept)) gpu = gpu_of(a->device, a->driver);
    } else {
      if (!aer_was_open) return r;  // details of an error not seen
      same_error = true;
    }
    if (!same_error) aer_ = Aer{true, a->severity, false};
    aer_.open = true;
    if (!gpu.empty() && !aer_.kept) {
      Event e = event_at(kEventPcieAer, gpu, text, pci);
      e.severity = aer_.severity;
      r.event = std::move(e);
      aer_.kept = true;
    } else if (!aer_.kept) {
      return r;  // an AER error of another device: noise here
    }
  } else {
    return r;
  }
  r.classified = true;
  return r;
}

std::optional<Event> parse_kernel_log_line(std::string_view line,
                                           const PciIndex& pci) {
  return KernelLogClassifier().classify(line, pci).event;
}

}  // namespace gd
