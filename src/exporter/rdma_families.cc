// The RDMA ports on /metrics. Where node_exporter's infiniband collector
// has a metric, the same name, type and labels (device, port), so the
// dashboards built on node_exporter work unchanged; the names are those of
// node_exporter's collector/infiniband_linux.go (node_infiniband_*; its
// byte counters are sysfs's 4-byte words times 4, as here). They carry no
// Hostname label, as node_exporter's do not. The rest (rates, the port's
// place beside the GPUs) are gpudoctor_rdma_*, with the Hostname label like
// every gpudoctor_* family.
#include <string>

#include "exporter/exporter.h"
#include "exporter/family_writer.h"
#include "exporter/prom_text.h"

namespace gd {

namespace {

using prom::FamilyWriter;
using prom::Labels;

// node_exporter's state_id and physical_state_id values (the numbers the
// kernel prints before the word; 0 = unknown here).
int state_id(std::string_view s) {
  if (s == "DOWN") return 1;
  if (s == "INIT") return 2;
  if (s == "ARMED") return 3;
  if (s == "ACTIVE") return 4;
  if (s == "ACTIVE_DEFER") return 5;
  return 0;
}
int phys_state_id(std::string_view s) {
  if (s == "Sleep") return 1;
  if (s == "Polling") return 2;
  if (s == "Disabled") return 3;
  if (s == "PortConfigurationTraining") return 4;
  if (s == "LinkUp") return 5;
  if (s == "LinkErrorRecovery") return 6;
  if (s == "PhyTest") return 7;
  return 0;
}

std::string port_labels(const RdmaPort& p) {
  Labels l;
  l.add_untrusted("device", p.device).add("port", int64_t{p.port});
  return l.body();
}

}  // namespace

void render_node_infiniband_families(const MetricsInput& in, std::string& out) {
  if (in.header && in.header->host.rdma_devices) {
    FamilyWriter f(out, "node_infiniband_info", "gauge",
                   "Non-numeric data from /sys/class/infiniband/<device>, "
                   "value is always 1.");
    for (const RdmaDevice& d : *in.header->host.rdma_devices) {
      Labels l;
      l.add_untrusted("device", d.device)
          .add_untrusted("firmware_version", d.fw_version)
          .add_untrusted("hca_type", d.model);
      f.add(l.body(), 1.0);
    }
  }
  if (!in.sample || !in.sample->host.rdma_ports) return;
  const auto& ports = *in.sample->host.rdma_ports;
  std::vector<std::string> labels;
  labels.reserve(ports.size());
  for (const RdmaPort& p : ports) labels.push_back(port_labels(p));
  auto each = [&](const char* name, const char* type, const char* help,
                  auto value) {
    FamilyWriter f(out, name, type, help);
    for (size_t i = 0; i < ports.size(); ++i)
      f.add_opt(labels[i], value(ports[i]));
  };
  using O = std::optional<double>;
  each("node_infiniband_state_id", "gauge",
       "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: "
       "armed, 4: active, 5: act defer)",
       [](const RdmaPort& p) {
         int id = state_id(p.state);
         return id ? O(id) : O();
       });
  each("node_infiniband_physical_state_id", "gauge",
       "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: "
       "polling, 3: disable, 4: shift, 5: link up, 6: link error recover, "
       "7: phytest)",
       [](const RdmaPort& p) {
         int id = phys_state_id(p.phys_state);
         return id ? O(id) : O();
       });
  each("node_infiniband_rate_bytes_per_second", "gauge",
       "Maximum signal transfer rate", [](const RdmaPort& p) {
         return p.rate_gbps ? O(*p.rate_gbps * 1e9 / 8) : O();
       });
  each("node_infiniband_port_data_received_bytes_total", "counter",
       "Number of data octets received on all links",
       [](const RdmaPort& p) { return p.rx_bytes_total; });
  each("node_infiniband_port_data_transmitted_bytes_total", "counter",
       "Number of data octets transmitted on all links",
       [](const RdmaPort& p) { return p.tx_bytes_total; });
  each("node_infiniband_symbol_error_total", "counter",
       "Number of minor link errors detected on one or more physical lanes.",
       [](const RdmaPort& p) { return p.symbol_error_total; });
  each("node_infiniband_link_error_recovery_total", "counter",
       "Number of times the link successfully recovered from an error state",
       [](const RdmaPort& p) { return p.link_error_recovery_total; });
  each("node_infiniband_link_downed_total", "counter",
       "Number of times the link failed to recover from an error state and "
       "went down",
       [](const RdmaPort& p) { return p.link_downed_total; });
  each("node_infiniband_port_errors_received_total", "counter",
       "Number of packets containing an error that were received on this "
       "port",
       [](const RdmaPort& p) { return p.port_rcv_errors_total; });
  each("node_infiniband_port_discards_transmitted_total", "counter",
       "Number of outbound packets discarded by the port because the port "
       "is down or congested",
       [](const RdmaPort& p) { return p.port_xmit_discards_total; });
  each("node_infiniband_port_transmit_wait_total", "counter",
       "Number of ticks during which the port had data to transmit but no "
       "data was sent during the entire tick",
       [](const RdmaPort& p) { return p.port_xmit_wait_total; });
  each("node_infiniband_local_link_integrity_errors_total", "counter",
       "Number of times that the count of local physical errors exceeded "
       "the threshold specified by LocalPhyErrors.",
       [](const RdmaPort& p) { return p.local_link_integrity_errors_total; });
  each("node_infiniband_excessive_buffer_overrun_errors_total", "counter",
       "Number of times that OverrunErrors consecutive flow control update "
       "periods occurred, each having at least one overrun error.",
       [](const RdmaPort& p) {
         return p.excessive_buffer_overrun_errors_total;
       });
}

void render_rdma_native_families(const MetricsInput& in, std::string& out) {
  if (!in.header || !in.header->host.rdma_devices) return;
  {
    FamilyWriter f(out, "gpudoctor_rdma_port_info", "gauge",
                   "An RDMA port and where it sits (value always 1): link "
                   "layer, RoCE net device, PCI address and NUMA node.");
    for (const RdmaDevice& d : *in.header->host.rdma_devices)
      for (const RdmaPortInfo& p : d.ports) {
        Labels l;
        l.add_untrusted("device", d.device)
            .add("port", int64_t{p.port})
            .add_untrusted("link_layer", p.link_layer)
            .add_untrusted("netdev", p.netdev.value_or(""))
            .add_untrusted("pci_bus_id", d.pci_bus_id)
            .add("numa_node",
                 d.numa_node ? std::to_string(*d.numa_node) : std::string());
        f.add(l.body(), 1.0);
      }
  }
  if (!in.sample || !in.sample->host.rdma_ports) return;
  FamilyWriter up(out, "gpudoctor_rdma_port_up", "gauge",
                  "1 when the port is ACTIVE, 0 when it is not.");
  for (const RdmaPort& p : *in.sample->host.rdma_ports)
    if (!p.state.empty())
      up.add(port_labels(p), p.state == "ACTIVE" ? 1.0 : 0.0);
  FamilyWriter rate(out, "gpudoctor_rdma_port_bytes_per_second", "gauge",
                    "Data through the port, averaged since the previous "
                    "sample.");
  for (const RdmaPort& p : *in.sample->host.rdma_ports) {
    const std::string l = port_labels(p);
    rate.add_opt(l + ",direction=\"rx\"", p.rx_bytes_per_s);
    rate.add_opt(l + ",direction=\"tx\"", p.tx_bytes_per_s);
  }
}

}  // namespace gd
