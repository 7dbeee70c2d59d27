// RDMA ports (InfiniBand and RoCE) from /sys/class/infiniband: the devices
// and their ports for the header's host.rdma_devices, and each port's
// state, rate and counters every sample (host.rdma_ports).
//
// Layout read (`sys_root` is "/sys", or a copy of a sysfs tree in tests:
// the global --sys-root option):
//   class/infiniband/DEV/device            link to the PCI function; its
//                                          numa_node beside it
//   class/infiniband/DEV/hca_type, fw_ver  model and firmware
//   class/infiniband/DEV/ports/N/          state, phys_state, rate,
//                                          link_layer, counters/*,
//                                          hw_counters/*, gid_attrs/ndevs/0
//   class/infiniband/DEV/device/net/*      a RoCE port's net device when
//                                          gid_attrs does not name it
//
// Devices and ports are found once, when the reader is built (a device
// added later is not seen until the next start), at most kRdmaPortsMax
// ports. Each file read every sample is opened once and kept open on sysfs
// (which prints an attribute anew on every read from offset 0); a fixture
// tree's regular files are opened for each read unless the options say
// otherwise, so a test may replace them on disk. A read goes into a fixed
// 64-byte buffer: no allocation, and a longer (hostile) value is cut and
// then rejected by the parser rather than read on.
//
// Counters: each one named in the trace format is read from counters/NAME,
// else hw_counters/NAME where the driver puts it there; only those files
// are read (on mlx5 every counters/ file is a query to the firmware, so
// reading all of them would cost far more than the few gpudoctor uses).
// port_rcv_data and port_xmit_data count 4-byte words (InfiniBand
// specification, PortCounters: "data octets divided by 4"; the kernel gives
// them as the device does and node_exporter multiplies by 4 too), so the
// byte rates are 4 x their growth per second. Widths: with the extended
// port counters (every HCA of the last decade) the data counters are 64
// bits and cannot wrap in practice; the narrow ones of the IB
// PortCounters attribute (symbol errors 16 bits, link downed and error
// recovery 8 bits, local link integrity and buffer overruns 4 bits, the
// data counters 32 bits without the extension) saturate at their maximum
// instead of wrapping. So: a counter that went down was cleared (perfquery
// -R): no rate for that interval; a data counter at exactly 2^32-1 is a
// saturated 32-bit one: no rate either; the error counters are passed on as
// read, and the rules judge only growth (a saturated counter stops
// growing, so it can hide new errors, never invent them).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd::procfs {

class RdmaPortReader {
 public:
  struct Options {
    // Keep regular files open too (the benchmark's fixture tree stands for
    // sysfs); tests that rewrite files leave it off.
    bool keep_regular_files = false;
  };
  explicit RdmaPortReader(const std::string& sys_root)
      : RdmaPortReader(sys_root, Options{}) {}
  RdmaPortReader(const std::string& sys_root, Options options);
  ~RdmaPortReader();
  RdmaPortReader(const RdmaPortReader&) = delete;
  RdmaPortReader& operator=(const RdmaPortReader&) = delete;

  // The devices found when the reader was built, in name order: empty when
  // the host has no /sys/class/infiniband; nullopt when /sys/class itself
  // could not be read (not looked).
  const std::optional<std::vector<RdmaDevice>>& devices() const;
  size_t port_count() const;

  // Reads every port into `out` (one entry per port, in the order of
  // devices(); the strings' capacity is reused). Rates are averages since
  // the previous call at `now` (Unix seconds); unset on the first call.
  void sample(double now, std::vector<RdmaPort>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd::procfs
