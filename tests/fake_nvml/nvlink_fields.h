// nvmlDeviceGetFieldValues' NVLink fields (api_nvlink.cc), for the field
// dispatcher of api_device_sampled.cc.
#pragma once

#include "state.h"

namespace fake_nvml {

// Answers `v` if it is an NVLink field; false for any other field. Counters
// are read at scenario time `now_s`, the instant of `v.timestamp`.
bool nvlink_field_value(const DeviceCall& call, nvmlFieldValue_t& v,
                        double now_s);

}  // namespace fake_nvml
