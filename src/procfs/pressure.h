// /proc/pressure/{cpu,memory,io} (PSI, Linux >= 4.20 with CONFIG_PSI):
//   some avg10=1.70 avg60=0.61 avg300=0.24 total=6791588
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// "some avg10" is the share of the last 10 s in which at least one task was
// stalled on the resource, already in percent.
#pragma once

#include <optional>
#include <string_view>

namespace gd::procfs {

std::optional<double> parse_psi_some_avg10(std::string_view text);

}  // namespace gd::procfs
