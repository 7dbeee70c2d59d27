// nvmlDeviceGetFieldValues' NVLink fields (api_nvlink.cc), for the field
// dispatcher of api_device_sampled.cc.
#pragma once

#include "state.h"

namespace fake_nvml {

// Answers `v` if it is an NVLink field; false for any other field.
bool nvlink_field_value(const DeviceCall& call, nvmlFieldValue_t& v);

}  // namespace fake_nvml
