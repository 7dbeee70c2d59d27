// The one data model of gpudoctor (docs/trace-format.md, version 1).
// Collectors fill it, the trace writer/reader serialise it, every consumer
// (diagnose, exporter, store, TUI, CLI) reads it.
//
// Rule: std::optional empty == the field was absent/null == "unknown / not
// supported". Never substitute 0 for unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gd {

template <typename T>
using opt = std::optional<T>;

// ---- parts of GPU facts and samples ---------------------------------------

// What the SMs and tensor cores really do (NVML GPM, Hopper and newer):
// percentages, averaged over the interval between two GPM samples.
struct GpmActivity {
  opt<double> sm_active_pct{}, sm_occupancy_pct{}, tensor_active_pct{},
      dram_active_pct{}, fp64_active_pct{}, fp32_active_pct{},
      fp16_active_pct{};
  // Project extension: graphics engine active (DCGM's GR_ENGINE_ACTIVE).
  opt<double> gr_engine_active_pct{};
  bool any() const {
    return sm_active_pct || sm_occupancy_pct || tensor_active_pct ||
           dram_active_pct || fp64_active_pct || fp32_active_pct ||
           fp16_active_pct || gr_engine_active_pct;
  }
  bool operator==(const GpmActivity&) const = default;
};

// One NVLink of a GPU.
struct NvLink {
  int link = 0;
  opt<bool> active{};
  opt<int> version{};  // NVLink generation (H100: 4)
  opt<uint64_t> crc_errors_total{}, replay_total{}, recovery_total{};
  bool operator==(const NvLink&) const = default;
};

// One MIG instance: a GPU instance and the compute instance in it.
struct MigInstance {
  uint32_t gi_id = 0, ci_id = 0;
  std::string profile{};  // "3g.40gb" (the GPU instance profile)
  std::string uuid{};     // "MIG-..."
  opt<uint64_t> mem_total_bytes{}, mem_used_bytes{};
  GpmActivity gpm{};  // per instance, where the GPU has GPM
  bool operator==(const MigInstance&) const = default;
};

// ---- header (trace line 1) -------------------------------------------------

// ---- RDMA (InfiniBand and RoCE) ports: /sys/class/infiniband -------------

// A port of an RDMA device as it was when the header was written.
struct RdmaPortInfo {
  int port = 0;                 // N of ports/N
  std::string link_layer;       // "InfiniBand" or "Ethernet" (RoCE); ""
  opt<double> max_rate_gbps{};  // the port's rate when the header was written
  opt<std::string> netdev{};    // the Ethernet device of a RoCE port
  bool operator==(const RdmaPortInfo&) const = default;
};

// An RDMA device (an HCA, "mlx5_0") and where it sits: its PCI address and
// NUMA node tie its ports to the GPUs that share its PCIe switch or node.
struct RdmaDevice {
  std::string device;      // "mlx5_0"
  std::string pci_bus_id;  // "0000:1a:00.0"; "" unknown
  opt<int> numa_node{};    // -1 from sysfs (no NUMA) is unknown
  std::string model;       // hca_type, "MT4129"; "" unknown
  std::string fw_version;  // fw_ver; "" unknown
  std::vector<RdmaPortInfo> ports{};
  bool operator==(const RdmaDevice&) const = default;
};

// One port now. The _total counters are the port's own totals as sysfs
// gives them (not per interval); a counter the device does not give is
// unset. Rates are averages since the previous sample.
struct RdmaPort {
  std::string device;
  int port = 0;
  std::string state;       // DOWN, INIT, ARMED, ACTIVE; "" unknown
  std::string phys_state;  // Polling, Disabled, LinkUp, ...; "" unknown
  opt<double> rate_gbps{};
  opt<double> rx_bytes_per_s{}, tx_bytes_per_s{};
  opt<uint64_t> symbol_error_total{}, link_error_recovery_total{},
      link_downed_total{}, port_rcv_errors_total{}, port_xmit_discards_total{},
      port_xmit_wait_total{}, local_link_integrity_errors_total{},
      excessive_buffer_overrun_errors_total{};
  // Live only, never written to a trace (the trace has the rates): bytes
  // received and sent since the counters were last cleared (4 x sysfs's
  // port_rcv_data / port_xmit_data), for /metrics' node_exporter counters.
  opt<uint64_t> rx_bytes_total{}, tx_bytes_total{};
  bool operator==(const RdmaPort&) const = default;
};

// Ports read at most (all devices together); more are left out. A large
// node has 8 to 18; the bound keeps a hostile tree from costing a sample.
inline constexpr size_t kRdmaPortsMax = 64;
// Longest device or net device name kept (IB_DEVICE_NAME_MAX is 64).
inline constexpr size_t kRdmaNameMax = 64;

struct HostInfo {
  std::string hostname;
  std::string kernel;
  std::string cpu_model;
  opt<int> cpu_count;
  opt<uint64_t> mem_total_bytes;
  opt<uint64_t> swap_total_bytes;
  std::string pid_namespace;  // "host", "container" or "" (unknown = host)
  // Additions to version 1: RDMA devices and their ports; nullopt = not
  // looked, empty = none on the host.
  opt<std::vector<RdmaDevice>> rdma_devices{};
};

struct DriverInfo {
  std::string driver_version;       // "535.129.03"
  std::string cuda_driver_version;  // "12.2"
  std::string nvml_version;         // "12.535.129.03"
  // Additions to version 1: filled even when NVML cannot start, so a
  // kernel-module / library mismatch shows both numbers.
  std::string kernel_module_version;  // /proc/driver/nvidia/version
  std::string library_version;        // of the libnvidia-ml that was loaded
};

// An NVIDIA display/3D controller on the PCI bus (/sys/bus/pci/devices),
// whether or not NVML enumerates it.
struct PciGpu {
  std::string address;      // "0000:07:00.0"
  opt<std::string> driver;  // bound driver ("nvidia", "vfio-pci"); none
};

struct GpuInfo {
  int index = 0;
  std::string uuid, name, pci_bus_id, serial;
  opt<uint64_t> memory_total_bytes;
  opt<double> power_limit_w, power_default_limit_w;
  opt<int> pcie_max_gen, pcie_max_width;
  opt<int> temp_slowdown_c, temp_shutdown_c;
  opt<int> sm_clock_max_mhz, mem_clock_max_mhz;
  std::string compute_capability;  // "8.0", "" unknown
  std::string architecture;        // "ampere", "" unknown
  opt<bool> ecc_enabled, mig_enabled, persistence_mode;
  std::string compute_mode;  // default|exclusive_process|prohibited|""
  opt<int> numa_node;
  // Additions to version 1.
  opt<int> minor_number;  // N of /dev/nvidiaN (not always == index)
  opt<int> temp_max_operating_c, temp_mem_max_c;
  opt<uint64_t> bar1_total_bytes;
  std::string vbios_version;
  opt<int> nvlink_count;
  // MIG-enabled GPUs: the instances that existed when the header was
  // written (static fields of MigInstance only); nullopt = not MIG.
  opt<std::vector<MigInstance>> mig_profiles{};
  // Project extension: MIG mode after the next GPU reset (NVML's pending
  // mode); differs from mig_enabled while a change waits for a reset.
  opt<bool> mig_enabled_pending{};
};

// nvml_status values of the header.
inline constexpr const char* kNvmlOk = "ok";
inline constexpr const char* kNvmlNoDriver = "no_driver";
inline constexpr const char* kNvmlDriverMismatch = "driver_library_mismatch";
inline constexpr const char* kNvmlNoPermission = "insufficient_permissions";
inline constexpr const char* kNvmlError = "error";

struct TraceHeader {
  int version = 1;
  HostInfo host;
  std::string nvml_status = kNvmlOk;
  std::string nvml_error;  // NVML's text when nvml_status == "error"
  // Why the kernel log (Xid, AER and OOM-killer lines) was not read: "" when
  // it was, or when the trace does not say (older traces). Rules that live
  // on those lines cannot judge a window without them.
  std::string kernel_log_error;
  opt<DriverInfo> driver;     // nullopt when NVML could not be used
  std::vector<GpuInfo> gpus;  // [] when NVML could not be used
  // Every NVIDIA GPU the PCI bus lists; nullopt = not looked.
  opt<std::vector<PciGpu>> pci_gpus;
  // Fake-NVML scenarios only: the raw JSON text of header "faults" (kept
  // verbatim so the fake can interpret it; "" when absent).
  std::string faults_json;
};

// ---- sample (every later line) --------------------------------------------

struct GpuProcess {
  uint32_t pid = 0;
  opt<uint64_t> used_bytes;
  std::string type = "compute";  // compute|graphics|compute+graphics
  // Additions to version 1: NVML's per-process utilisation samples (averaged
  // over the interval), and the MIG instance the process runs on.
  opt<double> sm_util_pct{}, mem_util_pct{};
  opt<uint32_t> gi_id{}, ci_id{};
};

// Banks by remaining spare rows (nvidia-smi "Bank Remap Availability
// Histogram").
struct RowRemapHistogram {
  uint32_t max = 0, high = 0, partial = 0, low = 0, none = 0;
  bool operator==(const RowRemapHistogram&) const = default;
};

// NVML's GPU recovery action values (trace-format.md); "" = unknown.
inline constexpr const char* kRecoveryNone = "none";
inline constexpr const char* kRecoveryGpuReset = "gpu_reset";
inline constexpr const char* kRecoveryNodeReboot = "node_reboot";
inline constexpr const char* kRecoveryDrainP2p = "drain_p2p";
inline constexpr const char* kRecoveryDrainAndReset = "drain_and_reset";

struct GpuSample {
  int index = 0;
  bool lost = false;   // {"index": i, "lost": true}: no other field is set
  bool stale = false;  // project extension: the read missed its deadline
                       // (hung driver call); other fields are unset.
  opt<double> util_pct, mem_util_pct;
  opt<uint64_t> mem_used_bytes;
  opt<int> temp_c, mem_temp_c;
  opt<double> power_w;
  opt<uint64_t> energy_mj_total;
  opt<double> fan_pct;
  opt<int> sm_clock_mhz, mem_clock_mhz, pstate;
  // nullopt = unknown; empty vector = none active.
  opt<std::vector<std::string>> clock_event_reasons;
  opt<int> pcie_gen, pcie_width;
  opt<uint64_t> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s, pcie_replay_total;
  opt<uint64_t> ecc_sbe_volatile_total, ecc_dbe_volatile_total;
  opt<bool> retired_pages_pending, remapped_rows_pending, remapped_rows_failure;
  opt<std::vector<GpuProcess>> processes;  // nullopt = could not be listed

  // ---- Additions to version 1 (written only when known) ----
  opt<uint64_t> mem_reserved_bytes, bar1_used_bytes;
  // Lifetime ECC counters, and by location where the GPU reports it.
  opt<uint64_t> ecc_sbe_aggregate_total, ecc_dbe_aggregate_total;
  opt<uint64_t> ecc_sram_correctable_aggregate_total,
      ecc_sram_uncorrectable_aggregate_total,
      ecc_dram_correctable_aggregate_total,
      ecc_dram_uncorrectable_aggregate_total;
  opt<uint64_t> ecc_sram_correctable_volatile_total,
      ecc_sram_uncorrectable_volatile_total,
      ecc_dram_correctable_volatile_total,
      ecc_dram_uncorrectable_volatile_total;
  opt<bool> ecc_sram_threshold_exceeded;  // NVML's SRAM ECC error status
  opt<uint64_t> remapped_rows_correctable_total,
      remapped_rows_uncorrectable_total;
  opt<RowRemapHistogram> row_remap_histogram;
  std::string recovery_action;   // kRecovery*; "" unknown
  opt<int> temp_limit_margin_c;  // degrees left before slowdown
  // Fields whose read FAILED in this sample (nvidia-smi's ERR!), by their
  // trace name; the field itself is unset either way.
  std::vector<std::string> read_errors;
  // Activity beyond "util" (GPM; Hopper and newer), the GPU as a whole.
  GpmActivity gpm{};
  // NVLink: data throughput of all links, and each link; nullopt = the GPU
  // has no NVLink (or the driver cannot say).
  opt<uint64_t> nvlink_tx_bytes_per_s{}, nvlink_rx_bytes_per_s{};
  opt<std::vector<NvLink>> nvlinks{};
  // MIG-enabled GPUs: the instances now; nullopt = not MIG (or unknown).
  opt<std::vector<MigInstance>> mig_instances{};
  // Project extensions: encoder/decoder utilisation, and the GPU's NVSwitch
  // fabric state (kFabric*; "" = not reported).
  opt<double> enc_util_pct{}, dec_util_pct{};
  std::string fabric_state{};
};

// Values of GpuSample::fabric_state (NVML's GPU fabric state).
inline constexpr const char* kFabricNotSupported = "not_supported";
inline constexpr const char* kFabricNotStarted = "not_started";
inline constexpr const char* kFabricInProgress = "in_progress";
inline constexpr const char* kFabricCompleted = "completed";
// Registration finished with an error (the fabric manager could not add
// the GPU to its NVLink partition).
inline constexpr const char* kFabricFailed = "failed";

// A busy process outside every GPU job (not a GPU process, not one of their
// descendants, not one of their ancestors): the "other work" that competes
// with the jobs for the CPUs.
struct OtherCpuProcess {
  uint32_t pid = 0;
  std::string comm, user;      // "" = unknown
  opt<std::string> container;  // ContainerRef::short_text(); nullopt = none
  double cpu_pct = 0;          // of one CPU, averaged since its last reading
  bool operator==(const OtherCpuProcess&) const = default;
};

struct HostSample {
  opt<double> cpu_util_pct, cpu_iowait_pct, cpu_steal_pct, load1;
  opt<uint64_t> mem_available_bytes, swap_used_bytes;
  opt<double> swap_in_pages_per_s, swap_out_pages_per_s;
  opt<uint64_t> disk_read_bytes_per_s, disk_write_bytes_per_s;
  opt<double> disk_busy_pct;
  // Project extensions (trace-format allows added fields): PSI "some avg10"
  // from /proc/pressure/{cpu,memory,io} where present.
  opt<double> psi_cpu_some_pct, psi_mem_some_pct, psi_io_some_pct;
  // Project extension: kernel-log lines read that no parser classified,
  // since the collector started (counted, never silently dropped).
  opt<uint64_t> kernel_lines_unclassified_total;
  // Additions to version 1: the busiest processes outside every GPU job,
  // at most kOtherCpuTopMax, busiest first; nullopt = not looked, empty =
  // none busy.
  opt<std::vector<OtherCpuProcess>> other_cpu_top{};
  // Additions to version 1: every RDMA port of the header's rdma_devices,
  // at most kRdmaPortsMax; nullopt = not looked (or none on the host).
  opt<std::vector<RdmaPort>> rdma_ports{};
};
inline constexpr size_t kOtherCpuTopMax = 8;

// Additions to version 1: the Kubernetes pod a process runs in, from its
// cgroup (the UID) and the container runtime and kubelet (the names).
struct ProcessPod {
  opt<std::string> uid, namespace_, name, container;  // nullopt = unknown
  // Project extension: the kubelet (or, when only the UID is known, the
  // runtime) answered and no longer lists the pod; nullopt = not asked.
  opt<bool> deleted;
  bool operator==(const ProcessPod&) const = default;
};
// Kubernetes caps names at 253 characters (namespaces and containers 63).
inline constexpr size_t kPodTextMax = 253;

struct ProcessSample {
  uint32_t pid = 0;
  opt<uint32_t> ppid;
  std::string user, name, cmdline;
  std::string
      state;  // R,S,D,Z,T,... or "missing" (NVML lists it, /proc does not)
  opt<double> cpu_pct;
  opt<int> threads;
  opt<uint64_t> rss_bytes;
  opt<std::string> cgroup;
  std::vector<std::string> libs;
  // Project extension: process start as Unix seconds (for elapsed time).
  opt<double> start_time;
  // Additions to version 1.
  opt<uint64_t> dev_shm_bytes;  // size of /dev/shm as this process sees it
  opt<uint32_t> ns_pid;         // pid inside its own PID namespace
  // The Slurm job (1..10 digits), from the cgroup or SLURM_JOB_ID in the
  // environment (common/slurm_job_id.h); nullopt = not known.
  opt<std::string> slurm_job_id;
  opt<ProcessPod> pod;  // nullopt = not in a pod (or not known)
};

// A process holding /dev/nvidia* open.
struct DeviceHolder {
  uint32_t pid = 0;
  std::vector<std::string> devices;  // "nvidia0", "nvidiactl", ...
};

// Event kinds beside xid, oom_kill, gpu_lost and nvml_error.
inline constexpr const char* kEventNvrm = "nvrm";
inline constexpr const char* kEventSxid = "sxid";
inline constexpr const char* kEventPcieAer = "pcie_aer";

struct Event {
  // xid | oom_kill | gpu_lost | nvml_error | nvrm | sxid | pcie_aer
  std::string kind;
  opt<int> gpu;
  opt<int> code;
  opt<uint32_t> pid;
  std::string text;
  // pcie_aer: corrected | uncorrected_non_fatal | fatal.
  std::string severity;
  // Project extension: the PCI address the line names (nvrm, pcie_aer),
  // kept when it maps to no GPU of the trace (gpu-missing names it).
  std::string pci_address;
  // Project extension: when the kernel logged the line (Unix seconds), from
  // its since-boot stamp and this machine's boot time; null when the line
  // has no stamp. A drain reason names an Xid by it.
  opt<double> logged_at{};
};

// A Slurm job's name, user and partition, as scontrol told them (capped,
// untrusted text: the job chose its name). Empty = not told.
struct SlurmJob {
  std::string id;  // 1..10 digits (common/slurm_job_id.h)
  std::string name, user, partition;
  bool operator==(const SlurmJob&) const = default;
};
// At most this many per sample (the jobs of the sample's processes).
inline constexpr size_t kSlurmJobsMax = 64;
// Caps on each string of a SlurmJob, where it is read.
inline constexpr size_t kSlurmJobNameMax = 128;
inline constexpr size_t kSlurmUserMax = 64;

// Project extension: a GPU (or a MIG device of one) the kubelet gave a
// pod's container, from its pod-resources API, also while no process runs.
struct PodAllocation {
  int gpu = 0;           // this host's GPU the device id names
  std::string uuid;      // the GPU's or MIG device's UUID, as the kubelet said
  opt<int> replica;      // a time-slicing replica ("UUID::N"); nullopt: none
  std::string resource;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...
  std::string namespace_, name, container;
  bool operator==(const PodAllocation&) const = default;
};
inline constexpr size_t kPodAllocationsMax = 1024;

struct Sample {
  double t = 0;
  std::vector<GpuSample> gpus;
  HostSample host;
  std::vector<ProcessSample> processes;
  std::vector<Event> events;
  // Processes holding /dev/nvidia* open, when the collector looked (it may
  // look only when GPU memory is unaccounted for); nullopt = not looked.
  opt<std::vector<DeviceHolder>> device_holders;
  // Processes the sample had but did not keep: over the per-sample process
  // budget of serve, record or a trace reader (model/process_budget.h).
  uint64_t processes_left_out = 0;
  // Project extension: the Slurm jobs of `processes` whose names were known
  // when the sample was taken (slurm_job_id -> name, user, partition).
  std::vector<SlurmJob> slurm_jobs;
  // Project extension: the GPUs of this host the kubelet allocated to pods,
  // at most kPodAllocationsMax; nullopt = not asked (not on Kubernetes, or
  // the kubelet did not answer), empty = none allocated.
  opt<std::vector<PodAllocation>> pod_allocations{};
};

// The job `id` of `s.slurm_jobs`, or nullptr.
inline const SlurmJob* find_slurm_job(const Sample& s, const std::string& id) {
  for (const SlurmJob& j : s.slurm_jobs)
    if (j.id == id) return &j;
  return nullptr;
}

}  // namespace gd
