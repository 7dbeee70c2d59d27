// The RDMA port reader (procfs/rdma_ports.h) on fake /sys trees laid out as
// the kernel lays out /sys/class/infiniband: an InfiniBand HCA with its
// counters/, a RoCE one whose counters sit in hw_counters/ and whose net
// device gid_attrs names, and hostile contents.
#include "procfs/rdma_ports.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using gd::RdmaPort;
using gd::procfs::RdmaPortReader;

namespace {

class FakeSys {
 public:
  FakeSys() {
    char tmpl[] = "/tmp/gd_rdma_XXXXXX";
    root_ = mkdtemp(tmpl);
    fs::create_directories(root_ + "/sys/class");
  }
  ~FakeSys() { fs::remove_all(root_); }
  FakeSys(const FakeSys&) = delete;
  FakeSys& operator=(const FakeSys&) = delete;

  std::string sys() const { return root_ + "/sys"; }

  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = fs::path(sys()) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  // An HCA at PCI `pci` on `numa`, its class entry linking to it.
  void device(const std::string& name, const std::string& pci, int numa,
              const std::string& model) const {
    const std::string dev = "devices/pci0000:00/0000:00:01.0/" + pci;
    write(dev + "/numa_node", std::to_string(numa) + "\n");
    const std::string cls = "class/infiniband/" + name;
    fs::create_directories(fs::path(sys()) / cls);
    fs::create_directory_symlink("../../../" + dev,
                                 fs::path(sys()) / cls / "device");
    write(cls + "/hca_type", model + "\n");
    write(cls + "/fw_ver", "28.39.1002\n");
  }

  void port(const std::string& name, int n, const std::string& layer,
            const std::string& rate, const std::string& counters_dir) const {
    const std::string p =
        "class/infiniband/" + name + "/ports/" + std::to_string(n);
    write(p + "/state", "4: ACTIVE\n");
    write(p + "/phys_state", "5: LinkUp\n");
    write(p + "/rate", rate + "\n");
    write(p + "/link_layer", layer + "\n");
    for (const char* c :
         {"port_rcv_data", "port_xmit_data", "symbol_error",
          "link_error_recovery", "link_downed", "port_rcv_errors",
          "port_xmit_discards", "port_xmit_wait", "local_link_integrity_errors",
          "excessive_buffer_overrun_errors"})
      write(p + "/" + counters_dir + "/" + c, "0\n");
  }

  void counter(const std::string& name, int n, const std::string& dir,
               const std::string& file, const std::string& value) const {
    write("class/infiniband/" + name + "/ports/" + std::to_string(n) + "/" +
              dir + "/" + file,
          value);
  }

 private:
  std::string root_;
};

void two_hcas(const FakeSys& f) {
  f.device("mlx5_0", "0000:1a:00.0", 0, "MT4129");
  f.port("mlx5_0", 1, "InfiniBand", "400 Gb/sec (4X NDR)", "counters");
  f.device("mlx5_1", "0000:9a:00.0", 1, "MT4125");
  f.port("mlx5_1", 1, "Ethernet", "100 Gb/sec (4X EDR)", "hw_counters");
  f.write("class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0", "ens8f0np0\n");
}

TEST(RdmaPorts, NoInfinibandClassListsNothing) {
  FakeSys f;
  RdmaPortReader r(f.sys());
  ASSERT_TRUE(r.devices().has_value());
  EXPECT_TRUE(r.devices()->empty());
  EXPECT_EQ(r.port_count(), 0u);
  std::vector<RdmaPort> out;
  r.sample(1, out);
  EXPECT_TRUE(out.empty());
}

TEST(RdmaPorts, UnreadableSysIsNotLooked) {
  RdmaPortReader r("/nonexistent/gd/sys");
  EXPECT_FALSE(r.devices().has_value());
}

TEST(RdmaPorts, DevicesPortsAndPlacement) {
  FakeSys f;
  two_hcas(f);
  RdmaPortReader r(f.sys());
  ASSERT_TRUE(r.devices());
  ASSERT_EQ(r.devices()->size(), 2u);
  const gd::RdmaDevice& ib = (*r.devices())[0];
  EXPECT_EQ(ib.device, "mlx5_0");
  EXPECT_EQ(ib.pci_bus_id, "0000:1a:00.0");
  EXPECT_EQ(ib.numa_node, 0);
  EXPECT_EQ(ib.model, "MT4129");
  EXPECT_EQ(ib.fw_version, "28.39.1002");
  ASSERT_EQ(ib.ports.size(), 1u);
  EXPECT_EQ(ib.ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(ib.ports[0].max_rate_gbps, 400);
  EXPECT_FALSE(ib.ports[0].netdev);
  const gd::RdmaDevice& roce = (*r.devices())[1];
  EXPECT_EQ(roce.numa_node, 1);
  EXPECT_EQ(roce.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(roce.ports[0].netdev, "ens8f0np0");
}

TEST(RdmaPorts, RatesAreFourBytesPerDataWordAndCountersAsRead) {
  FakeSys f;
  two_hcas(f);
  RdmaPortReader r(f.sys());
  std::vector<RdmaPort> out;
  r.sample(100, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].rx_bytes_per_s) << "no rate before a second reading";
  f.counter("mlx5_0", 1, "counters", "port_rcv_data", "2500000000\n");
  f.counter("mlx5_0", 1, "counters", "port_xmit_data", "1000\n");
  f.counter("mlx5_0", 1, "counters", "symbol_error", "65535\n");
  f.counter("mlx5_1", 1, "hw_counters", "link_downed", "3\n");
  r.sample(102, out);
  EXPECT_EQ(out[0].device, "mlx5_0");
  EXPECT_EQ(out[0].port, 1);
  EXPECT_EQ(out[0].state, "ACTIVE");
  EXPECT_EQ(out[0].phys_state, "LinkUp");
  EXPECT_EQ(out[0].rate_gbps, 400);
  // 2.5e9 words of 4 bytes in 2 s.
  EXPECT_DOUBLE_EQ(*out[0].rx_bytes_per_s, 5e9);
  EXPECT_DOUBLE_EQ(*out[0].tx_bytes_per_s, 2000);
  EXPECT_EQ(out[0].rx_bytes_total, 10000000000ull);
  EXPECT_EQ(out[0].symbol_error_total, 65535u);
  EXPECT_EQ(out[1].link_downed_total, 3u) << "hw_counters where counters/ "
                                             "lacks it";
  EXPECT_EQ(out[1].rate_gbps, 100);
}

TEST(RdmaPorts, ClearedOrSaturatedDataCountersGiveNoRate) {
  FakeSys f;
  two_hcas(f);
  f.counter("mlx5_0", 1, "counters", "port_rcv_data", "5000\n");
  f.counter("mlx5_0", 1, "counters", "port_xmit_data", "4294967290\n");
  RdmaPortReader r(f.sys());
  std::vector<RdmaPort> out;
  r.sample(1, out);
  f.counter("mlx5_0", 1, "counters", "port_rcv_data", "10\n");  // cleared
  f.counter("mlx5_0", 1, "counters", "port_xmit_data", "4294967295\n");
  r.sample(2, out);
  EXPECT_FALSE(out[0].rx_bytes_per_s);
  EXPECT_FALSE(out[0].tx_bytes_per_s);
  f.counter("mlx5_0", 1, "counters", "port_rcv_data", "260\n");
  r.sample(3, out);
  EXPECT_DOUBLE_EQ(*out[0].rx_bytes_per_s, 1000);
}

TEST(RdmaPorts, HostileContentsAreUnknownNotGuessed) {
  FakeSys f;
  two_hcas(f);
  f.write("class/infiniband/mlx5_0/ports/1/state", "4: ACT\x1b[2JIVE\n");
  f.write("class/infiniband/mlx5_0/ports/1/phys_state",
          std::string(5000, 'L') + "\n");
  f.write("class/infiniband/mlx5_0/ports/1/rate", "fast\n");
  f.counter("mlx5_0", 1, "counters", "symbol_error", "-3\n");
  f.counter("mlx5_0", 1, "counters", "link_downed",
            "99999999999999999999999\n");
  f.write("class/infiniband/mlx5_0/hca_type", "MT\"4129\n");
  RdmaPortReader r(f.sys());
  EXPECT_EQ((*r.devices())[0].model, "");
  std::vector<RdmaPort> out;
  r.sample(1, out);
  EXPECT_EQ(out[0].state, "");
  EXPECT_EQ(out[0].phys_state, "");
  EXPECT_FALSE(out[0].rate_gbps);
  EXPECT_FALSE(out[0].symbol_error_total);
  EXPECT_FALSE(out[0].link_downed_total);
  EXPECT_EQ(out[0].port_rcv_errors_total, 0u);
}

TEST(RdmaPorts, PortsAreBounded) {
  FakeSys f;
  f.device("mlx5_0", "0000:1a:00.0", 0, "MT4129");
  for (int n = 1; n <= 70; ++n)
    f.write("class/infiniband/mlx5_0/ports/" + std::to_string(n) + "/state",
            "1: DOWN\n");
  f.write("class/infiniband/mlx5_0/ports/junk/state", "4: ACTIVE\n");
  RdmaPortReader r(f.sys());
  EXPECT_EQ(r.port_count(), gd::kRdmaPortsMax);
  std::vector<RdmaPort> out;
  r.sample(1, out);
  EXPECT_EQ(out.size(), gd::kRdmaPortsMax);
  EXPECT_EQ(out[0].state, "DOWN");
  EXPECT_FALSE(out[0].symbol_error_total) << "a counter the port lacks";
}

TEST(RdmaPorts, RewrittenFilesAreReadAnew) {
  FakeSys f;
  two_hcas(f);
  RdmaPortReader r(f.sys());
  std::vector<RdmaPort> out;
  r.sample(1, out);
  f.write("class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (2X NDR)\n");
  f.write("class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
  r.sample(2, out);
  EXPECT_EQ(out[0].rate_gbps, 200);
  EXPECT_EQ(out[0].state, "DOWN");
}

}  // namespace
