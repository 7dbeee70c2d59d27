#include "trace/rdma_json.h"

#include "trace/json_out.h"

namespace gd::json_out {

void append_rdma_devices(std::string& out, const std::vector<RdmaDevice>& d) {
  out.push_back('[');
  for (size_t i = 0; i < d.size(); ++i) {
    const RdmaDevice& dev = d[i];
    if (i) out.push_back(',');
    lit(out, "{\"device\":");
    string(out, dev.device);
    lit(out, ",\"pci_bus_id\":");
    string_or_null(out, dev.pci_bus_id);
    lit(out, ",\"numa_node\":");
    value(out, dev.numa_node);
    lit(out, ",\"model\":");
    string_or_null(out, dev.model);
    lit(out, ",\"fw_version\":");
    string_or_null(out, dev.fw_version);
    lit(out, ",\"ports\":[");
    for (size_t j = 0; j < dev.ports.size(); ++j) {
      const RdmaPortInfo& p = dev.ports[j];
      if (j) out.push_back(',');
      lit(out, "{\"port\":");
      integer(out, p.port);
      lit(out, ",\"link_layer\":");
      string_or_null(out, p.link_layer);
      lit(out, ",\"max_rate_gbps\":");
      value(out, p.max_rate_gbps);
      lit(out, ",\"netdev\":");
      value(out, p.netdev);
      out.push_back('}');
    }
    lit(out, "]}");
  }
  out.push_back(']');
}

namespace {
// A counter the device does not give is absent.
template <size_t N>
void counter(std::string& out, const char (&key)[N],
             const std::optional<uint64_t>& v) {
  if (!v) return;
  lit(out, key);
  unsigned_integer(out, *v);
}
}  // namespace

void append_rdma_ports(std::string& out, const std::vector<RdmaPort>& ports) {
  out.push_back('[');
  for (size_t i = 0; i < ports.size(); ++i) {
    const RdmaPort& p = ports[i];
    if (i) out.push_back(',');
    lit(out, "{\"device\":");
    string(out, p.device);
    lit(out, ",\"port\":");
    integer(out, p.port);
    lit(out, ",\"state\":");
    string_or_null(out, p.state);
    lit(out, ",\"phys_state\":");
    string_or_null(out, p.phys_state);
    lit(out, ",\"rate_gbps\":");
    value(out, p.rate_gbps);
    lit(out, ",\"rx_bytes_per_s\":");
    value(out, p.rx_bytes_per_s);
    lit(out, ",\"tx_bytes_per_s\":");
    value(out, p.tx_bytes_per_s);
    counter(out, ",\"symbol_error_total\":", p.symbol_error_total);
    counter(out,
            ",\"link_error_recovery_total\":", p.link_error_recovery_total);
    counter(out, ",\"link_downed_total\":", p.link_downed_total);
    counter(out, ",\"port_rcv_errors_total\":", p.port_rcv_errors_total);
    counter(out, ",\"port_xmit_discards_total\":", p.port_xmit_discards_total);
    counter(out, ",\"port_xmit_wait_total\":", p.port_xmit_wait_total);
    counter(out, ",\"local_link_integrity_errors_total\":",
            p.local_link_integrity_errors_total);
    counter(out, ",\"excessive_buffer_overrun_errors_total\":",
            p.excessive_buffer_overrun_errors_total);
    out.push_back('}');
  }
  out.push_back(']');
}

}  // namespace gd::json_out

namespace gd::json_in {
namespace {

#define GD_RDMA_PORT_INFO_FIELDS(X) \
  X(port, custom)                   \
  X(link_layer, plain)              \
  X(max_rate_gbps, plain)           \
  X(netdev, plain)

#define GD_RDMA_DEVICE_FIELDS(X) \
  X(device, custom)              \
  X(pci_bus_id, plain)           \
  X(numa_node, plain)            \
  X(model, plain)                \
  X(fw_version, plain)           \
  X(ports, custom)

#define GD_RDMA_PORT_FIELDS(X)                \
  X(device, custom)                           \
  X(port, custom)                             \
  X(state, plain)                             \
  X(phys_state, plain)                        \
  X(rate_gbps, plain)                         \
  X(rx_bytes_per_s, plain)                    \
  X(tx_bytes_per_s, plain)                    \
  X(symbol_error_total, plain)                \
  X(link_error_recovery_total, plain)         \
  X(link_downed_total, plain)                 \
  X(port_rcv_errors_total, plain)             \
  X(port_xmit_discards_total, plain)          \
  X(port_xmit_wait_total, plain)              \
  X(local_link_integrity_errors_total, plain) \
  X(excessive_buffer_overrun_errors_total, plain)

void check_name(const Loc& loc, std::string_view key, const std::string& s) {
  if (s.size() > kRdmaNameMax)
    fail(loc, key, "longer than " + std::to_string(kRdmaNameMax) + " bytes");
}

int port_number(const Loc& loc, std::string_view key, element v) {
  const int n = integer_of<int>(loc, key, v);
  if (n < 0 || n > 65535) fail(loc, key, "not a port number (0-65535)");
  return n;
}

void parse_port_info(const Loc& loc, object obj, RdmaPortInfo& o) {
  enum class Key { GD_RDMA_PORT_INFO_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_RDMA_PORT_INFO_FIELDS(GD_KEY_NAME)};
  GD_RDMA_PORT_INFO_FIELDS(GD_CLEAR)
  bool have_port = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_RDMA_PORT_INFO_FIELDS(GD_CASE)
      case Key::port:
        o.port = port_number(loc, f.key, f.value);
        have_port = true;
        break;
    }
  }
  if (!have_port) missing(loc, "port");
  if (o.netdev) check_name(loc, "netdev", *o.netdev);
}

void parse_device(const Loc& loc, object obj, RdmaDevice& o) {
  enum class Key { GD_RDMA_DEVICE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_RDMA_DEVICE_FIELDS(GD_KEY_NAME)};
  GD_RDMA_DEVICE_FIELDS(GD_CLEAR)
  o.ports.clear();
  bool have_device = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_RDMA_DEVICE_FIELDS(GD_CASE)
      case Key::device:
        read(loc, f.key, f.value, o.device);
        have_device = !o.device.empty();
        break;
      case Key::ports:
        read_object_array(loc, f.key, f.value, o.ports, parse_port_info);
        if (o.ports.size() > kRdmaPortsMax) o.ports.resize(kRdmaPortsMax);
        break;
    }
  }
  if (!have_device) missing(loc, "device");
  check_name(loc, "device", o.device);
  for (std::string* s : {&o.pci_bus_id, &o.model, &o.fw_version})
    check_name(loc, "pci_bus_id/model/fw_version", *s);
}

void parse_port(const Loc& loc, object obj, RdmaPort& o) {
  enum class Key { GD_RDMA_PORT_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_RDMA_PORT_FIELDS(GD_KEY_NAME)};
  GD_RDMA_PORT_FIELDS(GD_CLEAR)
  bool have_device = false, have_port = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_RDMA_PORT_FIELDS(GD_CASE)
      case Key::device:
        read(loc, f.key, f.value, o.device);
        have_device = !o.device.empty();
        break;
      case Key::port:
        o.port = port_number(loc, f.key, f.value);
        have_port = true;
        break;
    }
  }
  if (!have_device) missing(loc, "device");
  if (!have_port) missing(loc, "port");
  check_name(loc, "device", o.device);
  check_name(loc, "state", o.state);
  check_name(loc, "phys_state", o.phys_state);
}

}  // namespace

void read_rdma_devices(const Loc& loc, std::string_view key, element v,
                       std::vector<RdmaDevice>& out) {
  read_object_array(loc, key, v, out, parse_device);
  // kRdmaPortsMax ports in all, as the collector reads.
  size_t ports = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (ports >= kRdmaPortsMax) {
      out.resize(i);
      break;
    }
    const size_t room = kRdmaPortsMax - ports;
    if (out[i].ports.size() > room) out[i].ports.resize(room);
    ports += out[i].ports.size();
  }
}

void read_rdma_ports(const Loc& loc, std::string_view key, element v,
                     std::vector<RdmaPort>& out) {
  read_object_array(loc, key, v, out, parse_port);
  if (out.size() > kRdmaPortsMax) out.resize(kRdmaPortsMax);
}

}  // namespace gd::json_in
