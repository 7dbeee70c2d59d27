// The RDMA fields of a trace (trace-format.md, "RDMA ports (InfiniBand and
// RoCE)"): the header's host.rdma_devices and a sample's host.rdma_ports,
// written and read.
#pragma once

#include <string>
#include <vector>

#include "model/sample.h"
#include "trace/json_in_read.h"

namespace gd::json_out {
// `[{...}, ...]`
void append_rdma_devices(std::string& out, const std::vector<RdmaDevice>& d);
void append_rdma_ports(std::string& out, const std::vector<RdmaPort>& ports);
}  // namespace gd::json_out

namespace gd::json_in {
// Read into `out`; a list longer than the model allows (kRdmaPortsMax ports
// in all) is cut there, a name longer than kRdmaNameMax is an error.
void read_rdma_devices(const Loc& loc, std::string_view key, element v,
                       std::vector<RdmaDevice>& out);
void read_rdma_ports(const Loc& loc, std::string_view key, element v,
                     std::vector<RdmaPort>& out);
}  // namespace gd::json_in
