// NVLink: each link's state, version and error counters, and the data
// throughput of all links; and the GPU's NVSwitch fabric state. One
// nvmlDeviceGetFieldValues call reads every link (as DCGM does); a driver
// whose field values do not cover the links is read link by link.
#include <algorithm>
#include <climits>

#include "nvml/device_reader.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {
namespace {

constexpr uint64_t kBytesPerKiB = 1024;
// Field values per link in the batch: state, version, CRC, replay, recovery.
constexpr int kFieldsPerLink = 5;
constexpr unsigned kPerLinkFields[kFieldsPerLink] = {
    NVML_FI_DEV_NVLINK_GET_STATE, NVML_FI_DEV_NVLINK_GET_VERSION,
    NVML_FI_DEV_NVLINK_ERROR_DL_CRC, NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY,
    NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY};

std::optional<uint64_t> counter(const nvmlFieldValue_t& v) {
  if (v.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  auto d = field_as_double(v);
  if (!d || *d < 0) return std::nullopt;
  if (v.valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG) return v.value.ullVal;
  return static_cast<uint64_t>(*d);
}

}  // namespace

std::optional<int> nvlink_generation(unsigned nvml_version) {
  switch (nvml_version) {
    case NVML_NVLINK_VERSION_1_0:
      return 1;
    case NVML_NVLINK_VERSION_2_0:
    case NVML_NVLINK_VERSION_2_2:
      return 2;
    case NVML_NVLINK_VERSION_3_0:
    case NVML_NVLINK_VERSION_3_1:
      return 3;
    case NVML_NVLINK_VERSION_4_0:
      return 4;
    case NVML_NVLINK_VERSION_5_0:
      return 5;
    default:
      return std::nullopt;
  }
}

// How many links the GPU has: NVML's link-count field, else the links whose
// state answers. Seeds the throughput counters, so the first sample has a
// rate.
void DeviceReader::read_nvlink_info(GpuInfo& info) {
  nvlink_count_ = 0;
  if (f_.nvmlDeviceGetFieldValues) {
    nvmlFieldValue_t fv{};
    fv.fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT;
    if (ok(f_.nvmlDeviceGetFieldValues(dev_, 1, &fv),
           "nvmlDeviceGetFieldValues") &&
        fv.nvmlReturn == NVML_SUCCESS) {
      if (auto n = field_as_double(fv))
        nvlink_count_ = static_cast<int>(
            std::clamp(*n, 0.0, static_cast<double>(NVML_NVLINK_MAX_LINKS)));
    }
  }
  if (nvlink_count_ == 0 && f_.nvmlDeviceGetNvLinkState) {
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      nvmlEnableState_t active = NVML_FEATURE_DISABLED;
      if (f_.nvmlDeviceGetNvLinkState(dev_, link, &active) != NVML_SUCCESS)
        break;
      nvlink_count_ = static_cast<int>(link) + 1;
    }
  }
  if (nvlink_count_ == 0) return;  // no NVLink: the field stays unknown
  info.nvlink_count = nvlink_count_;
  GpuSample seed;
  read_nvlinks(seed);
}

void DeviceReader::read_nvlinks(GpuSample& s) {
  if (nvlink_count_ == 0 || lost_now_) return;
  if (nvlink_variant_ == 0 && read_nvlinks_by_field(s)) return;
  nvlink_variant_ = 1;
  read_nvlinks_by_function(s);
}

bool DeviceReader::read_nvlinks_by_field(GpuSample& s) {
  if (!f_.nvmlDeviceGetFieldValues) return false;
  const size_t n = 2 + static_cast<size_t>(nvlink_count_) * kFieldsPerLink;
  nvlink_fields_.assign(n, nvmlFieldValue_t{});
  nvlink_fields_[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  nvlink_fields_[0].scopeId = UINT_MAX;  // all links
  nvlink_fields_[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  nvlink_fields_[1].scopeId = UINT_MAX;
  for (int link = 0; link < nvlink_count_; ++link) {
    for (int k = 0; k < kFieldsPerLink; ++k) {
      nvmlFieldValue_t& fv = nvlink_fields_[2 + link * kFieldsPerLink + k];
      fv.fieldId = kPerLinkFields[k];
      fv.scopeId = static_cast<unsigned>(link);
    }
  }
  nvmlReturn_t rc = f_.nvmlDeviceGetFieldValues(dev_, static_cast<int>(n),
                                                nvlink_fields_.data());
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
    return false;
  if (!read_ok(rc, "nvmlDeviceGetFieldValues(NVLink)",
               {"nvlinks", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s"}))
    return true;  // failed this time; the fields stay unknown
  // A driver without the per-link fields answers NOT_SUPPORTED for them:
  // read the links with the older per-link functions instead.
  if (nvlink_fields_[2].nvmlReturn == NVML_ERROR_NOT_SUPPORTED ||
      nvlink_fields_[2].nvmlReturn == NVML_ERROR_INVALID_ARGUMENT)
    return false;

  const nvmlFieldValue_t& tx = nvlink_fields_[0];
  const nvmlFieldValue_t& rx = nvlink_fields_[1];
  auto tx_kib = counter(tx), rx_kib = counter(rx);
  if (tx_kib && rx_kib) {
    Throughput now{true, *tx_kib, *rx_kib,
                   std::max(tx.timestamp, rx.timestamp)};
    const Throughput& was = nvlink_prev_;
    if (was.valid && now.at_us > was.at_us && now.tx_kib >= was.tx_kib &&
        now.rx_kib >= was.rx_kib) {
      const double seconds = static_cast<double>(now.at_us - was.at_us) / 1e6;
      s.nvlink_tx_bytes_per_s = static_cast<uint64_t>(
          static_cast<double>((now.tx_kib - was.tx_kib) * kBytesPerKiB) /
          seconds);
      s.nvlink_rx_bytes_per_s = static_cast<uint64_t>(
          static_cast<double>((now.rx_kib - was.rx_kib) * kBytesPerKiB) /
          seconds);
    }
    nvlink_prev_ = now;
  }

  std::vector<NvLink> links;
  links.reserve(static_cast<size_t>(nvlink_count_));
  for (int link = 0; link < nvlink_count_; ++link) {
    const nvmlFieldValue_t* f = &nvlink_fields_[2 + link * kFieldsPerLink];
    NvLink l;
    l.link = link;
    if (f[0].nvmlReturn == NVML_SUCCESS) {
      if (auto v = field_as_double(f[0]))
        l.active = *v == static_cast<double>(NVML_FEATURE_ENABLED);
    }
    if (f[1].nvmlReturn == NVML_SUCCESS) {
      if (auto v = field_as_double(f[1]))
        l.version = nvlink_generation(static_cast<unsigned>(*v));
    }
    l.crc_errors_total = counter(f[2]);
    l.replay_total = counter(f[3]);
    l.recovery_total = counter(f[4]);
    links.push_back(l);
  }
  s.nvlinks = std::move(links);
  return true;
}

void DeviceReader::read_nvlinks_by_function(GpuSample& s) {
  if (!f_.nvmlDeviceGetNvLinkState) return;
  std::vector<NvLink> links;
  for (int link = 0; link < nvlink_count_ && !lost_now_; ++link) {
    const unsigned l = static_cast<unsigned>(link);
    NvLink out;
    out.link = link;
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    if (read_ok(f_.nvmlDeviceGetNvLinkState(dev_, l, &active),
                "nvmlDeviceGetNvLinkState", {"nvlinks"})) {
      out.active = active == NVML_FEATURE_ENABLED;
    }
    unsigned version = 0;
    if (ok(call_if(f_.nvmlDeviceGetNvLinkVersion, dev_, l, &version),
           "nvmlDeviceGetNvLinkVersion")) {
      out.version = nvlink_generation(version);
    }
    struct CounterRead {
      nvmlNvLinkErrorCounter_t counter;
      opt<uint64_t> NvLink::*field;
    };
    static constexpr CounterRead kCounters[] = {
        {NVML_NVLINK_ERROR_DL_CRC_FLIT, &NvLink::crc_errors_total},
        {NVML_NVLINK_ERROR_DL_REPLAY, &NvLink::replay_total},
        {NVML_NVLINK_ERROR_DL_RECOVERY, &NvLink::recovery_total},
    };
    for (const CounterRead& c : kCounters) {
      unsigned long long v = 0;
      if (ok(call_if(f_.nvmlDeviceGetNvLinkErrorCounter, dev_, l, c.counter,
                     &v),
             "nvmlDeviceGetNvLinkErrorCounter")) {
        out.*c.field = v;
      }
    }
    links.push_back(out);
  }
  if (!lost_now_) s.nvlinks = std::move(links);
}

void DeviceReader::read_fabric(GpuSample& s) {
  if (!fabric_supported_ || !f_.nvmlDeviceGetGpuFabricInfo || lost_now_) return;
  nvmlGpuFabricInfo_t fabric{};
  nvmlReturn_t rc = f_.nvmlDeviceGetGpuFabricInfo(dev_, &fabric);
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
    fabric_supported_ = false;  // no NVSwitch fabric: never ask again
    return;
  }
  if (!read_ok(rc, "nvmlDeviceGetGpuFabricInfo", {"fabric_state"})) return;
  switch (fabric.state) {
    case NVML_GPU_FABRIC_STATE_NOT_SUPPORTED:
      s.fabric_state = kFabricNotSupported;
      break;
    case NVML_GPU_FABRIC_STATE_NOT_STARTED:
      s.fabric_state = kFabricNotStarted;
      break;
    case NVML_GPU_FABRIC_STATE_IN_PROGRESS:
      s.fabric_state = kFabricInProgress;
      break;
    case NVML_GPU_FABRIC_STATE_COMPLETED:
      // Registration finished, but it may have failed.
      s.fabric_state =
          fabric.status == NVML_SUCCESS ? kFabricCompleted : kFabricFailed;
      break;
    default:
      break;
  }
}

}  // namespace gd::nvml
