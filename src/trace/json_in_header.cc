// The trace-line parser (json_in.h): the header line, the node's static
// facts (host, driver, GPUs, PCI devices, faults).
#include <string>
#include <string_view>

#include "trace/faults_json.h"
#include "trace/json_in.h"
#include "trace/json_in_read.h"
#include "trace/rdma_json.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd::json_in {
namespace {

#define GD_HOST_INFO_FIELDS(X) \
  X(hostname, plain)           \
  X(kernel, plain)             \
  X(cpu_model, plain)          \
  X(cpu_count, plain)          \
  X(mem_total_bytes, plain)    \
  X(swap_total_bytes, plain)   \
  X(pid_namespace, plain)      \
  X(rdma_devices, custom)

#define GD_DRIVER_FIELDS(X)       \
  X(driver_version, plain)        \
  X(cuda_driver_version, plain)   \
  X(nvml_version, plain)          \
  X(kernel_module_version, plain) \
  X(library_version, plain)

#define GD_GPU_INFO_FIELDS(X)     \
  X(index, custom)                \
  X(uuid, plain)                  \
  X(name, plain)                  \
  X(pci_bus_id, plain)            \
  X(serial, plain)                \
  X(memory_total_bytes, plain)    \
  X(power_limit_w, plain)         \
  X(power_default_limit_w, plain) \
  X(pcie_max_gen, plain)          \
  X(pcie_max_width, plain)        \
  X(temp_slowdown_c, plain)       \
  X(temp_shutdown_c, plain)       \
  X(sm_clock_max_mhz, plain)      \
  X(mem_clock_max_mhz, plain)     \
  X(compute_capability, plain)    \
  X(architecture, plain)          \
  X(ecc_enabled, plain)           \
  X(mig_enabled, plain)           \
  X(persistence_mode, plain)      \
  X(compute_mode, plain)          \
  X(numa_node, plain)             \
  X(minor_number, plain)          \
  X(temp_max_operating_c, plain)  \
  X(temp_mem_max_c, plain)        \
  X(bar1_total_bytes, plain)      \
  X(vbios_version, plain)         \
  X(nvlink_count, plain)          \
  X(mig_profiles, custom)         \
  X(mig_enabled_pending, plain)

#define GD_HEADER_FIELDS(X)  \
  X(format, custom)          \
  X(version, custom)         \
  X(host, custom)            \
  X(nvml_status, plain)      \
  X(nvml_error, plain)       \
  X(kernel_log_error, plain) \
  X(driver, custom)          \
  X(gpus, custom)            \
  X(pci_gpus, custom)        \
  X(faults, custom)

// Objects whose fields are all `plain`; `loc` names the object.
void parse_host_info(const Loc& loc, object obj, HostInfo& o) {
  enum class Key { GD_HOST_INFO_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_HOST_INFO_FIELDS(GD_KEY_NAME)};
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_HOST_INFO_FIELDS(GD_CASE)
      case Key::rdma_devices:
        if (f.value.is_null()) break;
        o.rdma_devices.emplace();
        read_rdma_devices(loc, f.key, f.value, *o.rdma_devices);
        break;
    }
  }
}

void parse_driver_info(const Loc& loc, object obj, DriverInfo& o) {
  enum class Key { GD_DRIVER_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_DRIVER_FIELDS(GD_KEY_NAME)};
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_DRIVER_FIELDS(GD_CASE)
    }
  }
}

void parse_gpu_info(const Loc& loc, object obj, GpuInfo& o) {
  enum class Key { GD_GPU_INFO_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_GPU_INFO_FIELDS(GD_KEY_NAME)};
  bool have_index = false, have_mig = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_GPU_INFO_FIELDS(GD_CASE)
      case Key::index:
        o.index = integer_of<int>(loc, f.key, f.value);
        have_index = true;
        break;
      case Key::mig_profiles:
        read_optional_array(loc, f.key, f.value, o.mig_profiles, have_mig,
                            parse_mig_instance);
        break;
    }
  }
  if (!have_mig) o.mig_profiles.reset();
  if (!have_index) missing(loc, "index");
}

#define GD_PCI_GPU_FIELDS(X) \
  X(address, custom)         \
  X(driver, plain)

void parse_pci_gpu(const Loc& loc, object obj, PciGpu& o) {
  enum class Key { GD_PCI_GPU_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_PCI_GPU_FIELDS(GD_KEY_NAME)};
  bool have_address = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_PCI_GPU_FIELDS(GD_CASE)
      case Key::address:
        if (f.value.type() != element_type::STRING)
          wrong_type(loc, f.key, "a string", f.value);
        o.address.assign(f.value.get_string().value_unsafe());
        have_address = true;
        break;
    }
  }
  if (!have_address) missing(loc, "address");
}

}  // namespace

TraceHeader parse_header(simdjson::dom::parser& parser, const char* data,
                         size_t len, const std::string& where) {
  enum class Key { GD_HEADER_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_HEADER_FIELDS(GD_KEY_NAME)};
  const Loc loc{where, nullptr, {}, 0};
  const object obj = root_object(parser, data, len, loc);
  // Check what the line is before reading anything else of it.
  element format_value;
  if (obj["format"].get(format_value)) {
    fail(loc, "",
         "not a gpudoctor trace header (missing \"format\": "
         "\"gpudoctor-trace\")");
  }
  std::string_view format;
  if (format_value.get_string().get(format) || format != "gpudoctor-trace") {
    fail(loc, "format",
         "not a gpudoctor trace header (expected \"format\": "
         "\"gpudoctor-trace\")");
  }
  TraceHeader h;
  TraceHeader& o = h;     // the plain-field cases assign o.<field>
  h.nvml_status.clear();  // absent means unknown, not "ok"
  bool have_version = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_HEADER_FIELDS(GD_CASE)
      case Key::format:
        break;  // checked above
      case Key::version: {
        h.version = integer_of<int>(loc, f.key, f.value);
        if (h.version > 1) {
          fail(loc, f.key,
               "trace format version " + std::to_string(h.version) +
                   " is newer than this gpudoctor can read (version 1)");
        }
        if (h.version < 1) {
          fail(loc, f.key,
               "trace format version " + std::to_string(h.version) +
                   " does not exist (expected 1)");
        }
        have_version = true;
        break;
      }
      case Key::host: {
        if (f.value.is_null()) break;
        object host;
        if (f.value.get_object().get(host)) {
          wrong_type(loc, f.key, "an object", f.value);
        }
        parse_host_info(loc.member("host"), host, h.host);
        break;
      }
      case Key::driver: {
        if (f.value.is_null()) {
          h.driver.reset();
          break;
        }
        object driver;
        if (f.value.get_object().get(driver)) {
          wrong_type(loc, f.key, "an object", f.value);
        }
        h.driver.emplace();
        parse_driver_info(loc.member("driver"), driver, *h.driver);
        break;
      }
      case Key::gpus:
        read_object_array(loc, f.key, f.value, h.gpus, parse_gpu_info);
        break;
      case Key::pci_gpus:
        if (f.value.is_null()) {
          h.pci_gpus.reset();
          break;
        }
        h.pci_gpus.emplace();
        read_object_array(loc, f.key, f.value, *h.pci_gpus, parse_pci_gpu);
        break;
      case Key::faults:
        if (f.value.is_null()) {
          h.faults_json.clear();
        } else {
          h.faults_json =
              raw_top_level_member(std::string_view(data, len), "faults");
        }
        break;
    }
  }
  if (!have_version) missing(loc, "version");
  trace_checks::check_header(h, where);
  return h;
}

}  // namespace gd::json_in
