// Kernel-log text (dmesg, journal, syslog or /dev/kmsg records), line by
// line through parse_kernel_log_line, and the whole input as a log file
// through KernelLogSource. Every event must be well-formed: an `xid` with a
// code >= 0 and the "Xid (" marker in its text, an `oom_kill` with a pid
// > 0 and "Killed process" in its text, an `sxid` with its code, an `nvrm`
// NVRM line, a `pcie_aer` with a known severity and a GPU or an address;
// the text is a part of the line; the GPU, when set, is one the PCI index
// knows. The file follower must yield exactly the events of its complete
// lines, and count the same lines as unclassified.
#include <unistd.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/pci_bus_id.h"
#include "fuzz_check.h"
#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"
#include "kernellog/pci_address.h"

namespace {

const gd::PciIndex& pci_index() {
  static const gd::PciIndex index = [] {
    gd::PciIndex p;
    p.add("00000000:07:00.0", 0);
    p.add("00000000:CB:00.0", 1);
    p.add("0000:4e:00.0", 2);
    p.add_port("0000:00:03.1", "0000:07:00.0");  // the port above GPU 0
    p.add_pci_gpu("0000:b3:00.0");               // a GPU NVML does not list
    return p;
  }();
  return index;
}

bool is_inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() &&
          part.data() + part.size() <= whole.data() + whole.size());
}

// "dddd:bb:dd": lower-case hex, a domain of 4 or more digits.
bool is_normalised_pci(std::string_view a) {
  if (a.size() < 10) return false;
  const size_t domain = a.size() - 6;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool colon = i == domain || i == domain + 3;
    const char c = a[i];
    if (colon ? c != ':'
              : !(std::isdigit(static_cast<unsigned char>(c)) ||
                  (c >= 'a' && c <= 'f')))
      return false;
  }
  return true;
}

void check_event(const gd::Event& e, std::string_view line) {
  const std::string_view text = e.text;
  FUZZ_CHECK(line.find(text) != std::string_view::npos, text);
  if (e.kind == "xid") {
    FUZZ_CHECK(e.code && *e.code >= 0, line);
    FUZZ_CHECK(text.find("Xid (") != std::string_view::npos, line);
    FUZZ_CHECK(!e.pid || *e.pid > 0, line);
  } else if (e.kind == "sxid") {
    FUZZ_CHECK(e.code && *e.code >= 0 && !e.gpu, line);
    FUZZ_CHECK(text.find("SXid (") != std::string_view::npos, line);
  } else if (e.kind == "nvrm") {
    FUZZ_CHECK(!e.code && !e.pid, line);
    FUZZ_CHECK(text.find("NVRM:") != std::string_view::npos, line);
  } else if (e.kind == "pcie_aer") {
    FUZZ_CHECK(e.severity == "corrected" ||
                   e.severity == "uncorrected_non_fatal" ||
                   e.severity == "fatal",
               e.severity);
    FUZZ_CHECK(!e.code && !e.pid && (e.gpu || !e.pci_address.empty()), line);
  } else {
    FUZZ_CHECK(e.kind == "oom_kill", e.kind);
    FUZZ_CHECK(e.pid && *e.pid > 0, line);
    FUZZ_CHECK(!e.code && !e.gpu, line);
    FUZZ_CHECK(text.find("Killed process") != std::string_view::npos, line);
  }
  // Only an address that is not one of the index's GPUs is kept as such
  // (a switch's address is the switch's, whatever GPU shares it).
  FUZZ_CHECK(e.kind == "sxid" || e.pci_address.empty() ||
                 !pci_index().find(e.pci_address),
             e.pci_address);
  FUZZ_CHECK(!e.gpu || (*e.gpu >= 0 && *e.gpu <= 2), line);
}

struct Parsed {
  std::vector<gd::Event> events;
  uint64_t unclassified = 0;
};

// Line by line through one classifier, as the follower reads a log.
Parsed parse_lines(std::string_view text) {
  Parsed out;
  gd::KernelLogClassifier classifier;
  std::vector<gd::Event>& events = out.events;
  for (size_t nl = text.find('\n'); nl != std::string_view::npos;
       nl = text.find('\n')) {
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    FUZZ_CHECK(is_inside(gd::kernellog::kernel_message(line), line), line);
    if (auto pci = gd::canonical_pci_device(line)) {
      FUZZ_CHECK(is_normalised_pci(*pci), *pci);
      FUZZ_CHECK(gd::canonical_pci_device(*pci) == pci, *pci);
    }
    if (auto e = gd::parse_kernel_log_line(line, pci_index()))
      check_event(*e, line);
    auto r = classifier.classify(line, pci_index());
    if (!r.classified) ++out.unclassified;
    if (r.event) {
      check_event(*r.event, line);
      events.push_back(std::move(*r.event));
    }
  }
  return out;
}

Parsed follow_file(const uint8_t* data, size_t size) {
  const std::string path =
      "/tmp/gd_kernel_log_fuzz." + std::to_string(getpid()) + ".log";
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr, path);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, f) == size, path);
  std::fclose(f);
  gd::KernelLogSource source(path, /*from_start=*/true);
  FUZZ_CHECK(source.ok(), source.error());
  Parsed out;
  out.events = source.poll(pci_index());
  out.unclassified = source.unclassified_total();
  std::remove(path.c_str());
  return out;
}

bool same(const gd::Event& a, const gd::Event& b) {
  return a.kind == b.kind && a.gpu == b.gpu && a.code == b.code &&
         a.pid == b.pid && a.text == b.text && a.severity == b.severity &&
         a.pci_address == b.pci_address;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The last line counts too when parsed on its own.
  if (auto e = gd::parse_kernel_log_line(text.substr(text.rfind('\n') + 1),
                                         pci_index()))
    check_event(*e, text);
  const Parsed by_line = parse_lines(text);
  const Parsed followed = follow_file(data, size);
  FUZZ_CHECK(by_line.events.size() == followed.events.size(), text);
  for (size_t i = 0; i < by_line.events.size(); ++i)
    FUZZ_CHECK(same(by_line.events[i], followed.events[i]),
               by_line.events[i].text);
  FUZZ_CHECK(by_line.unclassified == followed.unclassified, text);
  return 0;
}
