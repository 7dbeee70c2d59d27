// CPU time that the RDMA ports add to a sample (procfs/rdma_ports.h): 8
// InfiniBand ports (8 HCAs of one port each, as on an 8-GPU server), each
// read for its state, physical state, rate and 10 counters (13 files), the
// rates worked out. Goal (issue 42): under 50 us per sample.
//
//   RdmaSample/kept    the files stay open, as they do on sysfs (the fixture
//                      tree's regular files stand for sysfs attributes; a
//                      real sysfs read adds the driver's own show(), and on
//                      mlx5 each counter file queries the firmware, a cost
//                      outside gpudoctor that reading only 10 counters keeps
//                      down)
//   RdmaSample/reopen  every file opened for every read (a tree where files
//                      cannot stay open; what the tests' fixtures cost)
// The tree lives in /dev/shm when there is one (tmpfs, like sysfs in
// memory), else in /tmp.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "procfs/rdma_ports.h"

namespace fs = std::filesystem;

namespace {

constexpr int kPorts = 8;

std::string make_tree() {
  std::string base = fs::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/gd_bench_rdma_XXXXXX";
  std::string root = mkdtemp(tmpl.data());
  const std::string sys = root + "/sys";
  auto put = [&](const std::string& rel, const std::string& text) {
    fs::path p = fs::path(sys) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  };
  for (int d = 0; d < kPorts; ++d) {
    const std::string name = "mlx5_" + std::to_string(d);
    const std::string pci = "0000:" + std::to_string(10 + d) + ":00.0";
    const std::string dev = "devices/pci0000:00/" + pci;
    put(dev + "/numa_node", d < 4 ? "0\n" : "1\n");
    fs::create_directories(fs::path(sys) / "class/infiniband" / name);
    fs::create_directory_symlink(
        "../../../" + dev,
        fs::path(sys) / "class/infiniband" / name / "device");
    put("class/infiniband/" + name + "/hca_type", "MT4129\n");
    const std::string port = "class/infiniband/" + name + "/ports/1";
    put(port + "/state", "4: ACTIVE\n");
    put(port + "/phys_state", "5: LinkUp\n");
    put(port + "/rate", "400 Gb/sec (4X NDR)\n");
    put(port + "/link_layer", "InfiniBand\n");
    for (const char* c :
         {"port_rcv_data", "port_xmit_data", "symbol_error",
          "link_error_recovery", "link_downed", "port_rcv_errors",
          "port_xmit_discards", "port_xmit_wait", "local_link_integrity_errors",
          "excessive_buffer_overrun_errors"})
      put(port + "/counters/" + c, "123456789012\n");
  }
  return root;
}

void BM_RdmaSample(benchmark::State& state, bool kept) {
  const std::string root = make_tree();
  {
    gd::procfs::RdmaPortReader reader(
        root + "/sys",
        gd::procfs::RdmaPortReader::Options{.keep_regular_files = kept});
    if (reader.port_count() != kPorts) state.SkipWithError("tree not read");
    std::vector<gd::RdmaPort> out;
    double now = 0;
    reader.sample(now, out);
    for (auto _ : state) {
      now += 1;
      reader.sample(now, out);
      benchmark::DoNotOptimize(out.data());
    }
    state.counters["ports"] = static_cast<double>(out.size());
  }
  fs::remove_all(root);
}

}  // namespace

BENCHMARK_CAPTURE(BM_RdmaSample, kept, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RdmaSample, reopen, false)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
