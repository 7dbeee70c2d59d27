// The lines of `status` about a datacenter GPU's own features: what its SMs
// and tensor cores really do (GPM), its NVLinks and NVSwitch fabric, and
// its MIG instances with their memory and processes. Each is "" for a GPU
// that has none of it.
#pragma once

#include <string>

#include "model/sample.h"

namespace gd {

// "     activity (GPM): SMs active 40%  occupancy 25%  tensor 30% ...".
std::string activity_line(const GpuSample& s);
// "     NVLink 18 links: 17 up, 1 DOWN (5)  tx ... rx ...", a line per link
// with errors, and the fabric state when it is not plainly registered.
std::string nvlink_lines(const GpuInfo& info, const GpuSample& s);
// One line per MIG instance with its memory, activity and the processes on
// it (names from the sample's process list); the pending MIG mode if it
// differs from the current one.
std::string mig_lines(const GpuInfo& info, const GpuSample& s,
                      const Sample& sample);

}  // namespace gd
