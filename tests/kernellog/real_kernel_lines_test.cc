// NVRM, SXid and PCIe AER lines from real logs (fixtures/, sources in
// fixtures/README.md): each run of lines is fed in order, as a log is read,
// and must give one event per error and count every line nothing
// recognised.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "kernellog/kernel_log.h"

namespace {

struct Read {
  std::vector<gd::Event> events;
  int unclassified = 0;
};

std::vector<std::string> fixture(const std::string& name) {
  std::ifstream in(std::string(GD_KERNELLOG_FIXTURES) + "/" + name);
  EXPECT_TRUE(in) << "missing fixture " << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_FALSE(lines.empty()) << name;
  return lines;
}

Read read(const std::vector<std::string>& lines, const gd::PciIndex& pci) {
  gd::KernelLogClassifier c;
  Read r;
  for (const std::string& line : lines) {
    auto res = c.classify(line, pci);
    if (!res.classified) ++r.unclassified;
    if (res.event) r.events.push_back(*res.event);
  }
  return r;
}

int count(const Read& r, const std::string& kind) {
  int n = 0;
  for (const auto& e : r.events) n += e.kind == kind;
  return n;
}

}  // namespace

TEST(RealAerLines, RootPortAboveTheGpuGivesOneEventPerError) {
  gd::PciIndex pci;
  pci.add("00000000:02:00.0", 0);
  pci.add_port("0000:00:02.0", "0000:02:00.0");
  Read r = read(fixture("aer_root_port_fatal.log"), pci);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].kind, "pcie_aer");
  EXPECT_EQ(r.events[0].severity, "corrected");
  EXPECT_EQ(r.events[0].gpu, 0);
  EXPECT_NE(r.events[0].text.find("Corrected error received"),
            std::string::npos);
  EXPECT_EQ(r.events[1].kind, "pcie_aer");
  EXPECT_EQ(r.events[1].severity, "fatal");
  EXPECT_EQ(r.events[1].gpu, 0);
  EXPECT_EQ(r.events[2].kind, "xid");
  EXPECT_EQ(r.events[2].code, 79);
  // broadcast, "no AER-aware driver", GPU-at and serial-number lines.
  EXPECT_EQ(r.unclassified, 4);
}

TEST(RealAerLines, PortNobodyMappedToAGpuIsNotAboutAGpu) {
  gd::PciIndex pci;
  pci.add("00000000:02:00.0", 0);  // no PCI scan: the port is unknown
  Read r = read(fixture("aer_root_port_fatal.log"), pci);
  EXPECT_EQ(count(r, "pcie_aer"), 0);
  EXPECT_EQ(count(r, "xid"), 1);
  EXPECT_EQ(r.unclassified, 12);
}

TEST(RealAerLines, GpuLoggingTheErrorItselfNeedsNoPortMap) {
  gd::PciIndex pci;
  pci.add("00000000:07:00.0", 2);
  Read r = read(fixture("aer_gpu_correctable.log"), pci);
  ASSERT_EQ(r.events.size(), 1u) << "port, GPU and audio function: one error";
  EXPECT_EQ(r.events[0].kind, "pcie_aer");
  EXPECT_EQ(r.events[0].severity, "corrected");
  EXPECT_EQ(r.events[0].gpu, 2);
  EXPECT_NE(r.events[0].text.find("nvidia 0000:07:00.0: PCIe Bus Error"),
            std::string::npos);
  // The port's own lines came before anything named the GPU.
  EXPECT_EQ(r.unclassified, 7);

  pci.add_port("0000:00:03.1", "0000:07:00.0");
  r = read(fixture("aer_gpu_correctable.log"), pci);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].gpu, 2);
  EXPECT_NE(r.events[0].text.find("Multiple Correctable"), std::string::npos);
  EXPECT_EQ(r.unclassified, 0);
}

TEST(RealAerLines, FatalOnThePortAboveAGpuNvmlDoesNotListKeepsItsAddress) {
  gd::PciIndex pci;  // NVML lists no GPU; the PCI scan found one
  pci.add_pci_gpu("0000:03:00.0");
  pci.add_port("0000:00:03.0", "0000:03:00.0");
  Read r = read(fixture("aer_port_fatal_multiple.log"), pci);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "pcie_aer");
  EXPECT_EQ(r.events[0].severity, "fatal");
  EXPECT_FALSE(r.events[0].gpu);
  EXPECT_EQ(r.events[0].pci_address, "0000:03:00.0");
  // The recovery lines before and after the burst are not understood.
  EXPECT_EQ(r.unclassified, 7);
}

TEST(RealAerLines, ErrorsOfOtherDevicesAreCountedNotKept) {
  gd::PciIndex pci;
  pci.add("00000000:01:00.0", 0);
  Read r = read(fixture("aer_other_device.log"), pci);
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(r.unclassified, 4);

  pci.add_port("0000:00:1c.5", "0000:01:00.0");
  r = read(fixture("aer_other_device.log"), pci);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].severity, "corrected");
  EXPECT_EQ(r.events[0].gpu, 0);
  EXPECT_EQ(r.unclassified, 0);
}

TEST(RealAerLines, UncorrectedNonFatalSeverity) {
  // The kernel's wording for the third severity (drivers/pci/pcie/aer.c),
  // on the GPU itself.
  gd::PciIndex pci;
  pci.add("00000000:07:00.0", 0);
  auto e = gd::parse_kernel_log_line(
      "nvidia 0000:07:00.0: PCIe Bus Error: severity=Uncorrected "
      "(Non-Fatal), type=Transaction Layer, (Requester ID)",
      pci);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->severity, "uncorrected_non_fatal");
  EXPECT_EQ(e->gpu, 0);
}

TEST(RealSxidLines, OneEventPerErrorWithItsCodeAndSwitch) {
  gd::PciIndex pci;
  pci.add("00000000:02:00.0", 0);  // a GPU on another domain's 02:00 bus
  Read r = read(fixture("sxid_nvswitch_links.log"), pci);
  ASSERT_EQ(r.events.size(), 2u) << "two links, each with detail lines";
  for (const auto& e : r.events) {
    EXPECT_EQ(e.kind, "sxid");
    EXPECT_EQ(e.code, 22013);
    EXPECT_FALSE(e.gpu) << "a switch is not a GPU";
    EXPECT_EQ(e.pci_address, "0000:02:00.0");
  }
  EXPECT_NE(r.events[1].text.find("Link 01"), std::string::npos);
  EXPECT_EQ(r.unclassified, 3);  // the probe and MSI lines
}

TEST(RealSxidLines, DataLineSeenAloneIsStillAnError) {
  // A dmesg --decode line quoted in https://github.com/leptonai/gpud/pull/338
  auto e = gd::parse_kernel_log_line(
      "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid "
      "(PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500, "
      "0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, "
      "0x00000000}",
      gd::PciIndex());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "sxid");
  EXPECT_EQ(e->code, 12028);
  EXPECT_EQ(e->pci_address, "0000:84:00.0");
}

TEST(RealNvrmLines, GspBootFailureAndRmInitAdapterFailed) {
  gd::PciIndex pci;
  pci.add("00000000:A1:00.0", 6);
  Read r = read(fixture("nvrm_gsp_init_failed.log"), pci);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].kind, "nvrm");
  EXPECT_NE(r.events[0].text.find("cannot proceed with booting GSP"),
            std::string::npos);
  EXPECT_FALSE(r.events[0].code);
  EXPECT_EQ(r.events[1].kind, "nvrm");
  EXPECT_NE(r.events[1].text.find("RmInitAdapter failed!"), std::string::npos);
  EXPECT_EQ(r.events[1].gpu, 6);
  EXPECT_EQ(r.unclassified, 1);  // "(the GPU is likely in a bad state ...)"
}

TEST(RealNvrmLines, RmInitAdapterFailedOnAGpuNvmlDoesNotListKeepsItsAddress) {
  Read r = read(fixture("nvrm_gsp_init_failed.log"), gd::PciIndex());
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_FALSE(r.events[1].gpu);
  EXPECT_EQ(r.events[1].pci_address, "0000:a1:00.0");
}

TEST(RealNvrmLines, GspTimeoutBannerOnceTheHistoryTableIsNoise) {
  Read r = read(fixture("nvrm_gsp_timeout.log"), gd::PciIndex());
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "nvrm");
  EXPECT_NE(r.events[0].text.find("GSP Timeout"), std::string::npos);
  EXPECT_EQ(r.unclassified, 3);
}

TEST(RealNvrmLines, FallenOffTheBusOverThreeLinesIsOneEventForItsGpu) {
  gd::PciIndex pci;
  pci.add_pci_gpu("0000:b3:00.0");
  Read r = read(fixture("nvrm_fallen_off_multiline.log"), pci);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "nvrm");
  EXPECT_EQ(r.events[0].pci_address, "0000:b3:00.0");
  EXPECT_NE(r.events[0].text.find("fallen off the bus"), std::string::npos);
  EXPECT_EQ(r.unclassified, 1);  // "The NVIDIA probe routine failed"
}

TEST(RealNvrmLines, FallenOffCompanionOfAnXid79AddsNoSecondEvent) {
  // https://github.com/akash-network/support/issues/209 (real/xid_lines.txt
  // lines 26 and 53).
  gd::PciIndex pci;
  pci.add("00000000:A1:00.0", 1);
  Read r = read(
      {"[Fri Apr  5 21:29:39 2024] NVRM: Xid (PCI:0000:a1:00): 79, "
       "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
       "[Fri Apr  5 21:29:39 2024] NVRM: GPU 0000:a1:00.0: GPU has fallen off "
       "the bus."},
      pci);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "xid");
  EXPECT_EQ(r.unclassified, 0);
  // Without the Xid the same line is the only sign the GPU is gone.
  r = read({"May 18 19:02:39 kernel: NVRM: GPU 0000:2b:00.0: GPU has fallen "
            "off the bus."},
           pci);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "nvrm");
  EXPECT_EQ(r.events[0].pci_address, "0000:2b:00.0");
}

TEST(RealNvrmLines, ApiMismatchOnOneLineOrOnFourIsOneEvent) {
  // https://github.com/stackhpc/ansible-slurm-appliance/issues/287: rsyslog
  // wrote the four lines of one message as one, with "#012" for newline.
  const std::string joined =
      "Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the "
      "version 535.54.03, but#012NVRM: this kernel module has the version "
      "530.30.02.  Please#012NVRM: make sure that this kernel module and all "
      "NVIDIA driver#012NVRM: components have the same version.";
  Read r = read({joined}, gd::PciIndex());
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "nvrm");
  // The same message as dmesg prints it: the lines between the "#012"s.
  std::vector<std::string> lines;
  std::string rest = joined.substr(joined.find("NVRM:"));
  for (size_t at; (at = rest.find("#012")) != std::string::npos;) {
    lines.push_back(rest.substr(0, at));
    rest = rest.substr(at + 4);
  }
  lines.push_back(rest);
  ASSERT_EQ(lines.size(), 4u);
  r = read(lines, gd::PciIndex());
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "nvrm");
  EXPECT_EQ(r.unclassified, 0);
}

TEST(RealNvrmLines, FallenOffTheBusAsOneKmsgRecord) {
  // /dev/kmsg keeps the three lines of the message above in one record and
  // escapes its newlines as "\x0a".
  auto e = gd::parse_kernel_log_line(
      "3,812,1843308145,-;NVRM: The NVIDIA GPU 0000:b3:00.0\\x0aNVRM: (PCI ID: "
      "10de:26b5) installed in this system has\\x0aNVRM: fallen off the bus "
      "and is not responding to commands.",
      gd::PciIndex());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "nvrm");
  EXPECT_EQ(e->pci_address, "0000:b3:00.0");
  EXPECT_TRUE(e->text.starts_with("NVRM: The NVIDIA GPU")) << e->text;
}
