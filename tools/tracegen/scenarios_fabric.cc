// The fabric scenarios: InfiniBand / RoCE ports beside the GPUs
// (host.rdma_devices, host.rdma_ports), for rdma-port-down,
// rdma-port-degraded, rdma-errors and comm-bound, and their look-alikes.
//
// The layout of every fabric scenario (world.cc puts GPUs 0-3 on NUMA
// node 3 and 4-7 on node 7):
//   port 0  mlx5_0/1  MT4129 (ConnectX-7) InfiniBand NDR 400  NUMA 3
//   port 1  mlx5_1/1  MT4129              InfiniBand NDR 400  NUMA 3
//   port 2  mlx5_2/1  MT4129              InfiniBand NDR 400  NUMA 7
//   port 3  mlx5_3/1  MT4129              InfiniBand NDR 400  NUMA 7
//   port 4  mlx5_4/1  MT4125 (ConnectX-6 Dx) RoCE 100 Gb/s (ens8f0), NUMA 3:
//           another model at a lower rate, never "degraded"
//   port 5  mlx5_5/1  MT4129 InfiniBand, DOWN / Polling for the whole
//           window (no cable): never "down"
// Ports 0-3 carry old errors (symbol errors, a link downed at some point in
// the past) that stay flat unless the scenario makes them grow.
#include <fmt/format.h>

#include <cmath>

#include "tracegen/scenario_base.h"

namespace gd::tracegen {
namespace {

constexpr size_t kPorts = 6;
constexpr double kLineBytesPerS = 400e9 / 8;  // NDR: 50 GB/s each way

void add_fabric(World& w) {
  struct Dev {
    const char* name;
    const char* pci;
    int numa;
    const char* model;
    const char* layer;
    double rate;
  };
  constexpr Dev kDevs[kPorts] = {
      {"mlx5_0", "0000:1a:00.0", 3, "MT4129", "InfiniBand", 400},
      {"mlx5_1", "0000:3c:00.0", 3, "MT4129", "InfiniBand", 400},
      {"mlx5_2", "0000:9a:00.0", 7, "MT4129", "InfiniBand", 400},
      {"mlx5_3", "0000:bc:00.0", 7, "MT4129", "InfiniBand", 400},
      {"mlx5_4", "0000:4d:00.0", 3, "MT4125", "Ethernet", 100},
      {"mlx5_5", "0000:ce:00.0", 7, "MT4129", "InfiniBand", 400},
  };
  w.header.host.rdma_devices.emplace();
  w.s.host.rdma_ports.emplace();
  for (size_t i = 0; i < kPorts; ++i) {
    const Dev& d = kDevs[i];
    RdmaDevice dev;
    dev.device = d.name;
    dev.pci_bus_id = d.pci;
    dev.numa_node = d.numa;
    dev.model = d.model;
    dev.fw_version = "28.39.1002";
    RdmaPortInfo info;
    info.port = 1;
    info.link_layer = d.layer;
    info.max_rate_gbps = d.rate;
    if (std::string_view(d.layer) == "Ethernet") info.netdev = "ens8f0";
    dev.ports.push_back(info);
    w.header.host.rdma_devices->push_back(std::move(dev));
    RdmaPort p;
    p.device = d.name;
    p.port = 1;
    const bool unused = i == 5;
    p.state = unused ? "DOWN" : "ACTIVE";
    p.phys_state = unused ? "Polling" : "LinkUp";
    p.rate_gbps = unused ? 10 : d.rate;  // what mlx5 shows with no link
    p.symbol_error_total = i < 4 ? 1234 * (i + 1) : 0;
    p.link_error_recovery_total = i < 4 ? 3 : 0;
    p.link_downed_total = i < 4 ? 2 : 0;
    p.port_rcv_errors_total = i < 4 ? 17 : 0;
    p.port_xmit_discards_total = 0;
    p.port_xmit_wait_total = 1000000;
    p.local_link_integrity_errors_total = 0;
    p.excessive_buffer_overrun_errors_total = 0;
    w.s.host.rdma_ports->push_back(std::move(p));
  }
}

RdmaPort& port(World& w, size_t i) { return w.s.host.rdma_ports->at(i); }

// Light background traffic on every ACTIVE port (a few % of the line), and
// a little transmit wait now and then, as on any healthy fabric.
void fabric_step(World& w) {
  for (size_t i = 0; i < kPorts; ++i) {
    RdmaPort& p = port(w, i);
    if (p.state != "ACTIVE") {
      p.rx_bytes_per_s = 0;
      p.tx_bytes_per_s = 0;
      continue;
    }
    const double line = *p.rate_gbps * 1e9 / 8;
    p.rx_bytes_per_s = std::round(line * (0.03 + 0.01 * w.rng.uniform()));
    p.tx_bytes_per_s = std::round(line * (0.03 + 0.01 * w.rng.uniform()));
    if (w.rng.chance(0.02)) *p.port_xmit_wait_total += 10;
  }
}

// The GPUs on NUMA node 3 (the first four at most): the job of the
// comm-bound scenarios, so that ports 0, 1 and 4 are its ports.
std::vector<int> node3_gpus(const World& w) {
  std::vector<int> out;
  for (const GpuInfo& g : w.header.gpus)
    if (g.numa_node == 3) out.push_back(g.index);
  return out;
}

// kHealthy: a DDP job busy throughout, ports up with old errors that stay
// flat. kFlap: port 1 goes down a third of the way in (link_downed +1) and
// is ACTIVE again at half-way. kLost: port 1 goes down at two thirds and
// stays down. kHalfRate: port 1 trained at 200 Gb/s (its peers at 400).
// kSymbolErrors: port 2 counts ~1-2 symbol errors a second from a third of
// the way in (and a receive error now and then).
struct FabricPorts : Scenario {
  enum Kind { kHealthy, kFlap, kLost, kHalfRate, kSymbolErrors } kind;
  explicit FabricPorts(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
    add_fabric(w);
    if (kind == kHalfRate) port(w, 1).rate_gbps = 200;
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    fabric_step(w);
    RdmaPort& p1 = port(w, 1);
    if (kind == kFlap || kind == kLost) {
      const bool down = kind == kFlap ? st.frac >= 1.0 / 3 && st.frac < 0.5
                                      : st.frac >= 2.0 / 3;
      if (down && p1.state == "ACTIVE") *p1.link_downed_total += 1;
      p1.state = down ? "DOWN" : "ACTIVE";
      p1.phys_state = down ? "Polling" : "LinkUp";
      if (down) p1.rx_bytes_per_s = p1.tx_bytes_per_s = 0;
    }
    if (kind == kSymbolErrors && st.frac >= 1.0 / 3) {
      RdmaPort& p2 = port(w, 2);
      *p2.symbol_error_total += 1 + (w.rng.chance(0.5) ? 1 : 0);
      if (w.rng.chance(0.1)) *p2.port_rcv_errors_total += 1;
    }
  }
};

// A job on the NUMA-3 GPUs whose GPUs saw-tooth in step: 4 s busy, 3 s
// idle. kComm: in the idle phases the all-reduce runs port 0 at ~92% of
// its line rate and its transmit wait grows: comm-bound. kInput: the same
// shape, but the loader workers are pegged (99%, runnable) and the ports
// idle: input-bound's, not the network's. kOtherPort: the same shape with
// calm workers, while port 2 (NUMA 7, no GPU of the job near it) runs at
// line rate for someone else: not this job's port.
struct FabricSawTooth : Scenario {
  enum Kind { kComm, kInput, kOtherPort } kind;
  explicit FabricSawTooth(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, node3_gpus(w));
    spec.worker_cpu = kind == kInput ? 99 : 25;
    TrainingJob job = w.add_training_job(spec);
    if (kind == kInput)
      for (const auto& ws : job.workers)
        for (uint32_t pid : ws) {
          w.proc(pid)->state = "R";
          w.set_cpu(pid, 99, 0.6);
        }
    add_fabric(w);
  }
  void step(World& w, const Step& st) override {
    w.begin_step(st);
    const bool busy = std::fmod(st.x, 7.0) < 4.0;
    const std::vector<int> mine = node3_gpus(w);
    for (int g : all_gpus(w)) {
      const bool in_job = std::find(mine.begin(), mine.end(), g) != mine.end();
      double util = 0;
      if (in_job)
        util = busy ? 96 + w.rng.normal() : 4 + 1.5 * std::abs(w.rng.normal());
      w.gpu_activity(g, util);
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
    fabric_step(w);
    const size_t hot = kind == kComm ? 0 : kind == kOtherPort ? 2 : kPorts;
    if (hot < kPorts && (!busy || kind == kOtherPort)) {
      RdmaPort& p = port(w, hot);
      p.rx_bytes_per_s =
          std::round(kLineBytesPerS * (0.9 + 0.04 * w.rng.uniform()));
      p.tx_bytes_per_s =
          std::round(kLineBytesPerS * (0.9 + 0.04 * w.rng.uniform()));
      *p.port_xmit_wait_total +=
          50000 + static_cast<uint64_t>(20000 * w.rng.uniform());
    }
  }
};

}  // namespace

std::vector<Entry> with_fabric_entries(std::vector<Entry> entries) {
  const std::vector<Entry> mine = {
      {{"fabric-healthy",
        "DDP job busy throughout; 4 InfiniBand NDR ports up with old "
        "errors that stay flat, a RoCE port of another model at 100 Gb/s, "
        "an uncabled port down for the whole window",
        1,
        {},
        {"rdma-port-down", "rdma-port-degraded", "rdma-errors", "comm-bound"}},
       make<FabricPorts>(FabricPorts::kHealthy)},
      {{"rdma-port-flap",
        "InfiniBand port mlx5_1/1 goes DOWN a third of the way in "
        "(link_downed +1) and is ACTIVE again at half-way",
        1,
        {"rdma-port-down"},
        {"rdma-port-degraded", "rdma-errors", "comm-bound"}},
       make<FabricPorts>(FabricPorts::kFlap)},
      {{"rdma-port-lost",
        "InfiniBand port mlx5_1/1 goes DOWN two thirds of the way in and "
        "stays down",
        1,
        {"rdma-port-down"},
        {"rdma-port-degraded", "rdma-errors"}},
       make<FabricPorts>(FabricPorts::kLost)},
      {{"rdma-port-half-rate",
        "InfiniBand port mlx5_1/1 ACTIVE at 200 Gb/s while its three peers "
        "(same model) run at 400",
        1,
        {"rdma-port-degraded"},
        {"rdma-port-down", "rdma-errors", "comm-bound"}},
       make<FabricPorts>(FabricPorts::kHalfRate)},
      {{"rdma-symbol-errors",
        "InfiniBand port mlx5_2/1 counts 1-2 symbol errors a second (and a "
        "receive error now and then) from a third of the way in",
        1,
        {"rdma-errors"},
        {"rdma-port-down", "rdma-port-degraded"}},
       make<FabricPorts>(FabricPorts::kSymbolErrors)},
      {{"comm-bound",
        "job on the NUMA-3 GPUs idles in step 3 s of every 7 while its port "
        "mlx5_0/1 runs at ~92% of 400 Gb/s and its transmit wait grows; "
        "loader workers calm",
        1,
        {"comm-bound"},
        {"input-bound", "io-bound", "rdma-port-degraded", "rdma-errors",
         "gpu-imbalance"}},
       make<FabricSawTooth>(FabricSawTooth::kComm)},
      {{"comm-bound-input-lookalike",
        "the same saw-tooth, but the loader workers are pegged at 99% and "
        "the ports idle: the input pipeline, not the network",
        1,
        {},
        {"comm-bound"}},
       make<FabricSawTooth>(FabricSawTooth::kInput)},
      {{"comm-bound-other-port",
        "the same saw-tooth with calm workers, while port mlx5_2/1 on the "
        "other NUMA node (no GPU of the job near it) runs at line rate",
        1,
        {},
        {"comm-bound"}},
       make<FabricSawTooth>(FabricSawTooth::kOtherPort)},
  };
  entries.insert(entries.end(), mine.begin(), mine.end());
  return entries;
}

}  // namespace gd::tracegen
