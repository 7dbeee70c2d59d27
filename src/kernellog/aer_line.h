// PCIe Advanced Error Reporting lines of the kernel's AER driver. One error
// prints a burst:
//   pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010
//   pcieport 0000:00:03.1: AER: Multiple Correctable error message received
//                          from 0000:07:00.0                    (6.x wording)
//   nvidia 0000:07:00.0: PCIe Bus Error: severity=Correctable, type=Data
//                        Link Layer, (Transmitter ID)   ("AER: " optional)
//   nvidia 0000:07:00.0:   device [10de:2184] error status/mask=...
//   nvidia 0000:07:00.0:    [12] Timeout
// The first is the root port announcing the error (and its source: an
// address, or before 4.x a requester id "id=BBDF" on the port's domain);
// "PCIe Bus Error" names each device that logged it; the rest are details.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::kernellog {

enum class AerLineKind { kReceived, kBusError, kDetail };

struct AerLine {
  AerLineKind kind = AerLineKind::kDetail;
  std::string driver;  // the driver of that device ("pcieport", "nvidia")
  std::string device;  // the address the line is printed for, normalised
  std::string source;  // kReceived: the error source, normalised; "" unknown
  // kReceived, kBusError: corrected | uncorrected_non_fatal | fatal.
  std::string severity;
};

// `message` without its log prefix; nullopt when it is not an AER line.
std::optional<AerLine> parse_aer(std::string_view message);

}  // namespace gd::kernellog
