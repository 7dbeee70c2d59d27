// NVLink and the NVSwitch fabric: each link of the sample's nvlinks as the
// per-link functions and as nvmlDeviceGetFieldValues answer them, the
// cumulative data throughput (the sample's rates integrated over the
// replay), and nvmlDeviceGetGpuFabricInfo from the sample's fabric_state.
#include <climits>
#include <cmath>
#include <cstring>

#include "nvlink_fields.h"
#include "state.h"

using fake_nvml::DeviceCall;

namespace {

// Links the GPU has: the header's nvlink_count, else those the sample lists.
unsigned link_count(const DeviceCall& call) {
  if (call.info().nvlink_count)
    return static_cast<unsigned>(std::max(0, *call.info().nvlink_count));
  return call.sample().nvlinks
             ? static_cast<unsigned>(call.sample().nvlinks->size())
             : 0;
}

const gd::NvLink* find_link(const DeviceCall& call, unsigned link) {
  if (!call.sample().nvlinks) return nullptr;
  for (const auto& l : *call.sample().nvlinks)
    if (l.link >= 0 && static_cast<unsigned>(l.link) == link) return &l;
  return nullptr;
}

// The link a per-link call names: INVALID_ARGUMENT past the GPU's links
// (as real NVML answers), NOT_SUPPORTED when the sample does not say.
nvmlReturn_t link_of(const DeviceCall& call, unsigned link,
                     const gd::NvLink*& out) {
  if (link_count(call) == 0) return NVML_ERROR_NOT_SUPPORTED;  // no NVLink
  if (link >= link_count(call)) return NVML_ERROR_INVALID_ARGUMENT;
  out = find_link(call, link);
  return out ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

// NVLink generation -> NVML's version enum (an A100's NVLink 3 is 3.1).
unsigned nvml_version(int generation) {
  switch (generation) {
    case 1:
      return NVML_NVLINK_VERSION_1_0;
    case 2:
      return NVML_NVLINK_VERSION_2_2;
    case 3:
      return NVML_NVLINK_VERSION_3_1;
    case 4:
      return NVML_NVLINK_VERSION_4_0;
    case 5:
      return NVML_NVLINK_VERSION_5_0;
    default:
      return NVML_NVLINK_VERSION_INVALID;
  }
}

gd::opt<uint64_t> link_counter(const gd::NvLink& l,
                               nvmlNvLinkErrorCounter_t counter) {
  switch (counter) {
    case NVML_NVLINK_ERROR_DL_CRC_FLIT:
      return l.crc_errors_total;
    case NVML_NVLINK_ERROR_DL_REPLAY:
      return l.replay_total;
    case NVML_NVLINK_ERROR_DL_RECOVERY:
      return l.recovery_total;
    default:
      return std::nullopt;  // not in the data model
  }
}

// The sum of one counter over every link, if every link knows it.
gd::opt<uint64_t> total(const DeviceCall& call,
                        nvmlNvLinkErrorCounter_t counter) {
  if (!call.sample().nvlinks) return std::nullopt;
  uint64_t sum = 0;
  for (const auto& l : *call.sample().nvlinks) {
    auto v = link_counter(l, counter);
    if (!v) return std::nullopt;
    sum += *v;
  }
  return sum;
}

void set_ull(nvmlFieldValue_t& v, gd::opt<uint64_t> value) {
  if (!value) {
    v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    return;
  }
  v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
  v.value.ullVal = *value;
  v.nvmlReturn = NVML_SUCCESS;
}

void set_uint(nvmlFieldValue_t& v, unsigned value) {
  v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
  v.value.uiVal = value;
  v.nvmlReturn = NVML_SUCCESS;
}

// KiB moved since the replay started, from the sample's rate.
gd::opt<uint64_t> throughput_kib(const DeviceCall& call, bool tx, double now) {
  auto bytes = fake_nvml::scenario_average(
      call.world(), call.info().index, 0, now,
      [tx](const gd::GpuSample& g) -> std::optional<double> {
        const auto& rate =
            tx ? g.nvlink_tx_bytes_per_s : g.nvlink_rx_bytes_per_s;
        if (!rate) return std::nullopt;
        return static_cast<double>(*rate);
      },
      /*integral=*/true);
  if (now <= 0) bytes = 0.0;  // the first instant: nothing moved yet
  if (!bytes) return std::nullopt;
  return static_cast<uint64_t>(*bytes / 1024.0);
}

}  // namespace

namespace fake_nvml {

bool nvlink_field_value(const DeviceCall& call, nvmlFieldValue_t& v,
                        double now_s) {
  auto per_link = [&](auto answer) {
    const gd::NvLink* l = nullptr;
    nvmlReturn_t rc = link_of(call, v.scopeId, l);
    if (rc != NVML_SUCCESS) {
      v.nvmlReturn = rc;
      return;
    }
    answer(*l);
  };
  switch (v.fieldId) {
    case NVML_FI_DEV_NVLINK_LINK_COUNT:
      if (link_count(call) == 0) {
        v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      } else {
        set_uint(v, link_count(call));
      }
      return true;
    case NVML_FI_DEV_NVLINK_GET_STATE:
      per_link([&](const gd::NvLink& l) {
        if (!l.active) {
          v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        } else {
          set_uint(v, *l.active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED);
        }
      });
      return true;
    case NVML_FI_DEV_NVLINK_GET_VERSION:
      per_link([&](const gd::NvLink& l) {
        if (!l.version) {
          v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        } else {
          set_uint(v, nvml_version(*l.version));
        }
      });
      return true;
    case NVML_FI_DEV_NVLINK_ERROR_DL_CRC:
      per_link([&](const gd::NvLink& l) { set_ull(v, l.crc_errors_total); });
      return true;
    case NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY:
      per_link([&](const gd::NvLink& l) { set_ull(v, l.replay_total); });
      return true;
    case NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY:
      per_link([&](const gd::NvLink& l) { set_ull(v, l.recovery_total); });
      return true;
    case NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL:
      set_ull(v, total(call, NVML_NVLINK_ERROR_DL_CRC_FLIT));
      return true;
    case NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL:
      set_ull(v, total(call, NVML_NVLINK_ERROR_DL_REPLAY));
      return true;
    case NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL:
      set_ull(v, total(call, NVML_NVLINK_ERROR_DL_RECOVERY));
      return true;
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
      // scopeId UINT_MAX (or any): every link together.
      set_ull(v, throughput_kib(
                     call, v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                     now_s));
      return true;
    default:
      return false;
  }
}

}  // namespace fake_nvml

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(
    nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive) {
  DeviceCall call("nvmlDeviceGetNvLinkState", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (isActive == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const gd::NvLink* l = nullptr;
  if (nvmlReturn_t rc = link_of(call, link, l); rc != NVML_SUCCESS) return rc;
  if (!l->active) return NVML_ERROR_NOT_SUPPORTED;
  *isActive = *l->active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkVersion(
    nvmlDevice_t device, unsigned int link, unsigned int* version) {
  DeviceCall call("nvmlDeviceGetNvLinkVersion", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const gd::NvLink* l = nullptr;
  if (nvmlReturn_t rc = link_of(call, link, l); rc != NVML_SUCCESS) return rc;
  if (!l->version) return NVML_ERROR_NOT_SUPPORTED;
  *version = nvml_version(*l->version);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(
    nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,
    unsigned long long* counterValue) {
  DeviceCall call("nvmlDeviceGetNvLinkErrorCounter", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (counterValue == nullptr || counter >= NVML_NVLINK_ERROR_COUNT)
    return NVML_ERROR_INVALID_ARGUMENT;
  const gd::NvLink* l = nullptr;
  if (nvmlReturn_t rc = link_of(call, link, l); rc != NVML_SUCCESS) return rc;
  auto v = link_counter(*l, counter);
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *counterValue = *v;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(
    nvmlDevice_t device, nvmlGpuFabricInfo_t* gpuFabricInfo) {
  DeviceCall call("nvmlDeviceGetGpuFabricInfo", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (gpuFabricInfo == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::string& state = call.sample().fabric_state;
  nvmlGpuFabricInfo_t out{};
  out.status = NVML_SUCCESS;
  if (state == gd::kFabricNotSupported) {
    out.state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
  } else if (state == gd::kFabricNotStarted) {
    out.state = NVML_GPU_FABRIC_STATE_NOT_STARTED;
    out.status = NVML_ERROR_NOT_READY;
  } else if (state == gd::kFabricInProgress) {
    out.state = NVML_GPU_FABRIC_STATE_IN_PROGRESS;
    out.status = NVML_ERROR_NOT_READY;
  } else if (state == gd::kFabricCompleted) {
    out.state = NVML_GPU_FABRIC_STATE_COMPLETED;
  } else if (state == gd::kFabricFailed) {
    out.state = NVML_GPU_FABRIC_STATE_COMPLETED;
    out.status = NVML_ERROR_UNKNOWN;
  } else {
    return NVML_ERROR_NOT_SUPPORTED;  // no NVSwitch fabric
  }
  // The cluster a fabric manager put the GPU in: the same for every GPU.
  std::memset(out.clusterUuid, 0x5A, sizeof out.clusterUuid);
  out.cliqueId = 1;
  *gpuFabricInfo = out;
  return NVML_SUCCESS;
}
#endif
