/*
 * gpudoctor's own declarations of the part of the NVML C API it uses.
 *
 * nvml.h is not available at build time (and the library is only ever
 * dlopen()ed), so these declarations are written by the project from public
 * facts of the NVML API reference: type and field layouts, constant values,
 * function signatures. They must match the real ABI exactly; tests/nvml
 * cross-checks every struct layout, constant and function signature declared
 * here against an independent bindgen translation of a real nvml.h
 * (nvml-wrapper-sys bindings.rs). Where a function or constant is newer than
 * that reference it is marked "not in the reference" below.
 *
 * Plain C, usable from C and C++:
 *  - the loader (nvml_library.h) uses the `<function>_fn` pointer typedefs;
 *  - the fake libnvidia-ml.so.1 (tests/fake_nvml) defines the functions; it
 *    defines GD_NVML_DECLARE_PROTOTYPES before including this header so the
 *    compiler checks its definitions against these prototypes.
 */
#ifndef GD_NVML_API_H
#define GD_NVML_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- return codes ---------------------------------------------------------
 */

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26, /* not in the reference (newer drivers) */
  NVML_ERROR_NOT_READY = 27,  /* not in the reference (newer drivers) */
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* ---- handles and enums ----------------------------------------------------
 */

typedef struct nvmlDevice_st* nvmlDevice_t;
/* MIG: a GPU instance and a compute instance of a MIG-enabled GPU. */
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;
/* GPM: an opaque sample buffer (nvmlGpmSampleAlloc/Free). */
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef enum nvmlEnableState_enum {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlTemperatureSensors_enum {
  NVML_TEMPERATURE_GPU = 0,
  NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

typedef enum nvmlTemperatureThresholds_enum {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN = 4,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR = 5,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX = 6,
  NVML_TEMPERATURE_THRESHOLD_COUNT
} nvmlTemperatureThresholds_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
  NVML_CLOCK_COUNT
} nvmlClockType_t;

/* Which value of a clock nvmlDeviceGetClock answers. */
typedef enum nvmlClockId_enum {
  NVML_CLOCK_ID_CURRENT = 0,
  NVML_CLOCK_ID_APP_CLOCK_TARGET = 1,
  NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
  NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3,
  NVML_CLOCK_ID_COUNT
} nvmlClockId_t;

/* NVLink error counters (nvmlDeviceGetNvLinkErrorCounter). */
typedef enum nvmlNvLinkErrorCounter_enum {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,   /* data link replays */
  NVML_NVLINK_ERROR_DL_RECOVERY = 1, /* data link recoveries */
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2, /* flow-control (flit) CRC errors */
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3, /* data CRC errors */
  NVML_NVLINK_ERROR_DL_ECC_DATA = 4,
  NVML_NVLINK_ERROR_COUNT
} nvmlNvLinkErrorCounter_t;

typedef enum nvmlPStates_enum {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlComputeMode_enum {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1, /* deprecated by NVIDIA */
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
  NVML_COMPUTEMODE_COUNT
} nvmlComputeMode_t;

typedef enum nvmlPcieUtilCounter_enum {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1,
  NVML_PCIE_UTIL_COUNT
} nvmlPcieUtilCounter_t;

typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
  NVML_MEMORY_ERROR_TYPE_COUNT
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1,
  NVML_ECC_COUNTER_TYPE_COUNT
} nvmlEccCounterType_t;

/* Where a memory error counter counts (nvmlDeviceGetMemoryErrorCounter). */
typedef enum nvmlMemoryLocation_enum {
  NVML_MEMORY_LOCATION_L1_CACHE = 0,
  NVML_MEMORY_LOCATION_L2_CACHE = 1,
  NVML_MEMORY_LOCATION_DRAM = 2, /* also NVML_MEMORY_LOCATION_DEVICE_MEMORY */
  NVML_MEMORY_LOCATION_REGISTER_FILE = 3,
  NVML_MEMORY_LOCATION_TEXTURE_MEMORY = 4,
  NVML_MEMORY_LOCATION_TEXTURE_SHM = 5,
  NVML_MEMORY_LOCATION_CBU = 6,
  NVML_MEMORY_LOCATION_SRAM = 7,
  NVML_MEMORY_LOCATION_COUNT
} nvmlMemoryLocation_t;

/* Value of field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (not in the reference:
 * r570+). Xid 154 announces a change. */
typedef enum nvmlDeviceGpuRecoveryAction_s {
  NVML_GPU_RECOVERY_ACTION_NONE = 0,
  NVML_GPU_RECOVERY_ACTION_GPU_RESET = 1,
  NVML_GPU_RECOVERY_ACTION_NODE_REBOOT = 2,
  NVML_GPU_RECOVERY_ACTION_DRAIN_P2P = 3,
  NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET = 4
} nvmlDeviceGpuRecoveryAction_t;

typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_COUNT
} nvmlValueType_t;

/* Architecture is a plain unsigned int with #defined values in nvml.h. */
typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10 /* not in the reference (newer) */
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu

/* MIG mode (unsigned int out-parameters of nvmlDeviceGetMigMode). */
#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE 0x1

/* GPU instance profile indices (the `profile` argument of
 * nvmlDeviceGetGpuInstanceProfileInfo*; the profile's own id is in the
 * answer). */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x8

/* NVLink: the most links a GPU has (H100: 18). */
#define NVML_NVLINK_MAX_LINKS 18

/* Value of nvmlDeviceGetNvLinkVersion (and NVML_FI_DEV_NVLINK_GET_VERSION):
 * an enum, not the NVLink generation (an A100's NVLink 3 answers 5). Not in
 * the reference. */
#define NVML_NVLINK_VERSION_INVALID 0
#define NVML_NVLINK_VERSION_1_0 1
#define NVML_NVLINK_VERSION_2_0 2
#define NVML_NVLINK_VERSION_2_2 3
#define NVML_NVLINK_VERSION_3_0 4
#define NVML_NVLINK_VERSION_3_1 5
#define NVML_NVLINK_VERSION_4_0 6
#define NVML_NVLINK_VERSION_5_0 7

/* GPU fabric (NVSwitch / fabric manager) state, nvmlGpuFabricInfo_t.state.
 * Not in the reference (r525+). */
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

/* GPM (Hopper and newer). */
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1

/* GPM metric ids; values are percentages (0..100) over the interval
 * between two samples. */
typedef enum nvmlGpmMetricId_enum {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,   /* graphics engine active */
  NVML_GPM_METRIC_SM_UTIL = 2,         /* SMs active */
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,    /* warps resident of the maximum */
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5, /* any tensor pipe active */
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,   /* DRAM bandwidth of peak */
  NVML_GPM_METRIC_FP64_UTIL = 11,
  NVML_GPM_METRIC_FP32_UTIL = 12,
  NVML_GPM_METRIC_FP16_UTIL = 13,
  NVML_GPM_METRIC_MAX = 98 /* one more than the largest id */
} nvmlGpmMetricId_t;

/* Clock event ("throttle") reason bits (unsigned long long bit mask).
 * Newer nvml.h renames them nvmlClocksEventReason*, same values. */
#define nvmlClocksThrottleReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksThrottleReasonApplicationsClocksSetting 0x0000000000000002ULL
#define nvmlClocksThrottleReasonSwPowerCap 0x0000000000000004ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008ULL
#define nvmlClocksThrottleReasonSyncBoost 0x0000000000000010ULL
#define nvmlClocksThrottleReasonSwThermalSlowdown 0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080ULL
#define nvmlClocksThrottleReasonDisplayClockSetting 0x0000000000000100ULL
#define nvmlClocksThrottleReasonNone 0x0000000000000000ULL

/* Field ids for nvmlDeviceGetFieldValues. */
#define NVML_FI_DEV_MEMORY_TEMP 82
/* NVLink, all links: error totals, link count, and cumulative data
 * throughput in KiB (scopeId UINT_MAX = every link). */
#define NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL 38
#define NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL 45
#define NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL 52
#define NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL 59
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
/* NVLink, one link (scopeId = the link): counters, state, version. */
#define NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY 161
#define NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY 162
#define NVML_FI_DEV_NVLINK_ERROR_DL_CRC 163
#define NVML_FI_DEV_NVLINK_GET_STATE 165
#define NVML_FI_DEV_NVLINK_GET_VERSION 166
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230 /* not in the reference */

/* "No value" marker, e.g. nvmlProcessInfo_t.usedGpuMemory under some
 * virtualisation. nvml.h defines it as (-1); compared after conversion to the
 * field's unsigned type it is all ones. */
#define NVML_VALUE_NOT_AVAILABLE (-1)

/* Buffer sizes the API documents for string out-parameters. */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32

/* ---- structs ------------------------------------------------------------- */

/* Layout of nvmlDeviceGetPciInfo_v2/_v3. The original nvmlDeviceGetPciInfo
 * wrote an older, shorter layout that shares busIdLegacy (then "busId") and
 * domain..pciSubSystemId, so reading only those fields after the v1 call is
 * safe (the caller zero-fills the struct first). */
typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version; /* must be nvmlMemory_v2 */
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

/* Versioned structs carry sizeof(struct) | (version << 24). */
#define NVML_STRUCT_VERSION(data, ver) \
  (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

/* Banks by how many spare rows they have left (nvmlDeviceGetRowRemapper-
 * Histogram). */
typedef struct nvmlRowRemapperHistogramValues_st {
  unsigned int max;
  unsigned int high;
  unsigned int partial;
  unsigned int low;
  unsigned int none;
} nvmlRowRemapperHistogramValues_t;

/* Not in the reference (r550+): degrees left before the GPU slows down
 * (nvidia-smi's "GPU T.Limit Temp"). */
typedef struct nvmlMarginTemperature_v1_st {
  unsigned int version; /* must be nvmlMarginTemperature_v1 */
  int marginTemperature;
} nvmlMarginTemperature_v1_t;
typedef nvmlMarginTemperature_v1_t nvmlMarginTemperature_t;
#define nvmlMarginTemperature_v1 NVML_STRUCT_VERSION(MarginTemperature, 1)

/* Not in the reference (r550+): SRAM ECC counters and whether they passed
 * the threshold at which NVIDIA asks for the board back. */
typedef struct nvmlEccSramErrorStatus_v1_st {
  unsigned int version; /* must be nvmlEccSramErrorStatus_v1 */
  unsigned long long aggregateUncParity;
  unsigned long long aggregateUncSecDed;
  unsigned long long aggregateCor;
  unsigned long long volatileUncParity;
  unsigned long long volatileUncSecDed;
  unsigned long long volatileCor;
  unsigned long long aggregateUncBucketL2;
  unsigned long long aggregateUncBucketSm;
  unsigned long long aggregateUncBucketPcie;
  unsigned long long aggregateUncBucketMcu;
  unsigned long long aggregateUncBucketOther;
  unsigned int bThresholdExceeded;
} nvmlEccSramErrorStatus_v1_t;
typedef nvmlEccSramErrorStatus_v1_t nvmlEccSramErrorStatus_t;
#define nvmlEccSramErrorStatus_v1 NVML_STRUCT_VERSION(EccSramErrorStatus, 1)

typedef struct nvmlUtilization_st {
  unsigned int gpu;    /* percent */
  unsigned int memory; /* percent */
} nvmlUtilization_t;

/* Filled by nvmlDevice{Compute,Graphics}RunningProcesses (no suffix). */
typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory; /* bytes */
} nvmlProcessInfo_v1_t;

/* Filled by the _v2 functions. */
typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/* Filled by the _v3 functions (same layout as v2). */
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId; /* in: NVML_FI_* */
  unsigned int scopeId; /* in: e.g. link or sensor, 0 when unused */
  long long timestamp;  /* out: CPU time of the reading, microseconds */
  long long latencyUsec;
  nvmlValueType_t valueType; /* out */
  nvmlReturn_t nvmlReturn;   /* out: status of this one field */
  nvmlValue_t value;         /* out */
} nvmlFieldValue_t;

/* Per-process utilisation samples (nvmlDeviceGetProcessUtilization). */
typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp; /* CPU time of the sample, microseconds */
  unsigned int smUtil;          /* percent */
  unsigned int memUtil;         /* percent */
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* ---- MIG ---- */

typedef struct nvmlGpuInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
  unsigned int id; /* the profile id (nvmlGpuInstanceInfo_t.profileId) */
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

/* nvmlDeviceGetGpuInstanceProfileInfoV: the same with a version and the
 * profile's name ("MIG 3g.40gb"). */
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
  unsigned int version; /* must be nvmlGpuInstanceProfileInfo_v2 */
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 \
  NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2)

typedef struct nvmlGpuInstanceInfo_st {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceInfo_st {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

/* ---- GPM ---- */

/* Names of a metric, filled by nvmlGpmMetricsGet (the library's strings). */
typedef struct nvmlGpmMetricInfo_st {
  char* shortName;
  char* longName;
  char* unit;
} nvmlGpmMetricInfo_t;

typedef struct nvmlGpmMetric_t {
  unsigned int metricId;   /* in: NVML_GPM_METRIC_* */
  nvmlReturn_t nvmlReturn; /* out: status of this metric */
  double value;            /* out */
  nvmlGpmMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_t {
  unsigned int version; /* must be NVML_GPM_METRICS_GET_VERSION */
  unsigned int numMetrics;
  nvmlGpmSample_t sample1; /* the earlier sample */
  nvmlGpmSample_t sample2; /* the later sample */
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_t {
  unsigned int version; /* must be NVML_GPM_SUPPORT_VERSION */
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

/* Not in the reference (r525+): the GPU's place in an NVSwitch fabric, as
 * the fabric manager set it up (nvmlDeviceGetGpuFabricInfo). */
typedef unsigned char nvmlGpuFabricState_t;
typedef struct nvmlGpuFabricInfo_st {
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status; /* of the fabric registration */
  unsigned int cliqueId;
  nvmlGpuFabricState_t state; /* NVML_GPU_FABRIC_STATE_* */
} nvmlGpuFabricInfo_t;

/* ---- functions ----------------------------------------------------------- */

/* Every function gpudoctor resolves, as X(name, (parameters)). All return
 * nvmlReturn_t except nvmlErrorString, declared separately below. The
 * versioned names (_v2, _v3) are distinct exported symbols of the library. */
#define GD_NVML_FUNCTIONS(X)                                                   \
  X(nvmlInit_v2, (void))                                                       \
  X(nvmlInit, (void))                                                          \
  X(nvmlShutdown, (void))                                                      \
  X(nvmlSystemGetDriverVersion, (char* version, unsigned int length))          \
  X(nvmlSystemGetNVMLVersion, (char* version, unsigned int length))            \
  X(nvmlSystemGetCudaDriverVersion_v2, (int* cudaDriverVersion))               \
  X(nvmlSystemGetCudaDriverVersion, (int* cudaDriverVersion))                  \
  X(nvmlDeviceGetCount_v2, (unsigned int* deviceCount))                        \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t* device)) \
  X(nvmlDeviceGetName, (nvmlDevice_t device, char* name, unsigned int length)) \
  X(nvmlDeviceGetUUID, (nvmlDevice_t device, char* uuid, unsigned int length)) \
  X(nvmlDeviceGetSerial,                                                       \
    (nvmlDevice_t device, char* serial, unsigned int length))                  \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci))       \
  X(nvmlDeviceGetPciInfo_v2, (nvmlDevice_t device, nvmlPciInfo_t * pci))       \
  X(nvmlDeviceGetPciInfo, (nvmlDevice_t device, nvmlPciInfo_t * pci))          \
  X(nvmlDeviceGetMemoryInfo_v2,                                                \
    (nvmlDevice_t device, nvmlMemory_v2_t * memory))                           \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory))     \
  X(nvmlDeviceGetMinorNumber,                                                  \
    (nvmlDevice_t device, unsigned int* minorNumber))                          \
  X(nvmlDeviceGetVbiosVersion,                                                 \
    (nvmlDevice_t device, char* version, unsigned int length))                 \
  X(nvmlDeviceGetBAR1MemoryInfo,                                               \
    (nvmlDevice_t device, nvmlBAR1Memory_t * bar1Memory))                      \
  X(nvmlDeviceGetPowerManagementLimit,                                         \
    (nvmlDevice_t device, unsigned int* limit))                                \
  X(nvmlDeviceGetPowerManagementDefaultLimit,                                  \
    (nvmlDevice_t device, unsigned int* defaultLimit))                         \
  X(nvmlDeviceGetMaxPcieLinkGeneration,                                        \
    (nvmlDevice_t device, unsigned int* maxLinkGen))                           \
  X(nvmlDeviceGetMaxPcieLinkWidth,                                             \
    (nvmlDevice_t device, unsigned int* maxLinkWidth))                         \
  X(nvmlDeviceGetCurrPcieLinkGeneration,                                       \
    (nvmlDevice_t device, unsigned int* currLinkGen))                          \
  X(nvmlDeviceGetCurrPcieLinkWidth,                                            \
    (nvmlDevice_t device, unsigned int* currLinkWidth))                        \
  X(nvmlDeviceGetTemperatureThreshold,                                         \
    (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,           \
     unsigned int* temp))                                                      \
  X(nvmlDeviceGetMaxClockInfo,                                                 \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))          \
  X(nvmlDeviceGetCudaComputeCapability,                                        \
    (nvmlDevice_t device, int* major, int* minor))                             \
  X(nvmlDeviceGetArchitecture,                                                 \
    (nvmlDevice_t device, nvmlDeviceArchitecture_t * arch))                    \
  X(nvmlDeviceGetEccMode, (nvmlDevice_t device, nvmlEnableState_t * current,   \
                           nvmlEnableState_t * pending))                       \
  X(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int* currentMode,     \
                           unsigned int* pendingMode))                         \
  X(nvmlDeviceGetPersistenceMode,                                              \
    (nvmlDevice_t device, nvmlEnableState_t * mode))                           \
  X(nvmlDeviceGetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t * mode)) \
  /* not in the reference; only where GPU memory is a NUMA node itself */      \
  X(nvmlDeviceGetNumaNodeId, (nvmlDevice_t device, unsigned int* node))        \
  X(nvmlDeviceGetUtilizationRates,                                             \
    (nvmlDevice_t device, nvmlUtilization_t * utilization))                    \
  X(nvmlDeviceGetTemperature,                                                  \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,                 \
     unsigned int* temp))                                                      \
  X(nvmlDeviceGetFieldValues,                                                  \
    (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values))          \
  /* milliwatts */                                                             \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int* power))       \
  /* millijoules since the driver was loaded */                                \
  X(nvmlDeviceGetTotalEnergyConsumption,                                       \
    (nvmlDevice_t device, unsigned long long* energy))                         \
  X(nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int* speed))         \
  X(nvmlDeviceGetClockInfo,                                                    \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))          \
  X(nvmlDeviceGetPerformanceState,                                             \
    (nvmlDevice_t device, nvmlPstates_t * pState))                             \
  /* not in the reference: r535+ name of ...ClocksThrottleReasons */           \
  X(nvmlDeviceGetCurrentClocksEventReasons,                                    \
    (nvmlDevice_t device, unsigned long long* clocksEventReasons))             \
  X(nvmlDeviceGetCurrentClocksThrottleReasons,                                 \
    (nvmlDevice_t device, unsigned long long* clocksThrottleReasons))          \
  /* value in KB/s; gpudoctor (and its fake) take KB = 1024 bytes */           \
  X(nvmlDeviceGetPcieThroughput,                                               \
    (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value)) \
  X(nvmlDeviceGetPcieReplayCounter,                                            \
    (nvmlDevice_t device, unsigned int* value))                                \
  X(nvmlDeviceGetTotalEccErrors,                                               \
    (nvmlDevice_t device, nvmlMemoryErrorType_t errorType,                     \
     nvmlEccCounterType_t counterType, unsigned long long* eccCounts))         \
  X(nvmlDeviceGetMemoryErrorCounter,                                           \
    (nvmlDevice_t device, nvmlMemoryErrorType_t errorType,                     \
     nvmlEccCounterType_t counterType, nvmlMemoryLocation_t locationType,      \
     unsigned long long* count))                                               \
  /* not in the reference (r550+) */                                           \
  X(nvmlDeviceGetSramEccErrorStatus,                                           \
    (nvmlDevice_t device, nvmlEccSramErrorStatus_t * status))                  \
  X(nvmlDeviceGetRowRemapperHistogram,                                         \
    (nvmlDevice_t device, nvmlRowRemapperHistogramValues_t * values))          \
  /* not in the reference (r550+) */                                           \
  X(nvmlDeviceGetMarginTemperature,                                            \
    (nvmlDevice_t device, nvmlMarginTemperature_t * marginTempInfo))           \
  X(nvmlDeviceGetRetiredPagesPendingStatus,                                    \
    (nvmlDevice_t device, nvmlEnableState_t * isPending))                      \
  X(nvmlDeviceGetRemappedRows,                                                 \
    (nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows,       \
     unsigned int* isPending, unsigned int* failureOccurred))                  \
  X(nvmlDeviceGetComputeRunningProcesses_v3,                                   \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))  \
  X(nvmlDeviceGetComputeRunningProcesses_v2,                                   \
    (nvmlDevice_t device, unsigned int* infoCount,                             \
     nvmlProcessInfo_v2_t* infos))                                             \
  X(nvmlDeviceGetComputeRunningProcesses,                                      \
    (nvmlDevice_t device, unsigned int* infoCount,                             \
     nvmlProcessInfo_v1_t* infos))                                             \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3,                                  \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))  \
  X(nvmlDeviceGetGraphicsRunningProcesses_v2,                                  \
    (nvmlDevice_t device, unsigned int* infoCount,                             \
     nvmlProcessInfo_v2_t* infos))                                             \
  X(nvmlDeviceGetGraphicsRunningProcesses,                                     \
    (nvmlDevice_t device, unsigned int* infoCount,                             \
     nvmlProcessInfo_v1_t* infos))                                             \
  X(nvmlDeviceGetProcessUtilization,                                           \
    (nvmlDevice_t device, nvmlProcessUtilizationSample_t * utilization,        \
     unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp)) \
  X(nvmlDeviceGetEncoderUtilization,                                           \
    (nvmlDevice_t device, unsigned int* utilization,                           \
     unsigned int* samplingPeriodUs))                                          \
  X(nvmlDeviceGetDecoderUtilization,                                           \
    (nvmlDevice_t device, unsigned int* utilization,                           \
     unsigned int* samplingPeriodUs))                                          \
  /* MIG */                                                                    \
  X(nvmlDeviceGetMaxMigDeviceCount,                                            \
    (nvmlDevice_t device, unsigned int* count))                                \
  X(nvmlDeviceGetMigDeviceHandleByIndex,                                       \
    (nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice))        \
  X(nvmlDeviceIsMigDeviceHandle,                                               \
    (nvmlDevice_t device, unsigned int* isMigDevice))                          \
  X(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int* id))       \
  X(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int* id))   \
  X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle,                              \
    (nvmlDevice_t migDevice, nvmlDevice_t * device))                           \
  X(nvmlDeviceGetGpuInstanceProfileInfoV,                                      \
    (nvmlDevice_t device, unsigned int profile,                                \
     nvmlGpuInstanceProfileInfo_v2_t* info))                                   \
  X(nvmlDeviceGetGpuInstanceProfileInfo,                                       \
    (nvmlDevice_t device, unsigned int profile,                                \
     nvmlGpuInstanceProfileInfo_t* info))                                      \
  X(nvmlDeviceGetGpuInstanceById,                                              \
    (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gpuInstance))    \
  X(nvmlGpuInstanceGetInfo,                                                    \
    (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t * info))             \
  /* NVLink */                                                                 \
  X(nvmlDeviceGetNvLinkState,                                                  \
    (nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive))     \
  X(nvmlDeviceGetNvLinkVersion,                                                \
    (nvmlDevice_t device, unsigned int link, unsigned int* version))           \
  X(nvmlDeviceGetNvLinkErrorCounter,                                           \
    (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter, \
     unsigned long long* counterValue))                                        \
  /* not in the reference (r525+) */                                           \
  X(nvmlDeviceGetGpuFabricInfo,                                                \
    (nvmlDevice_t device, nvmlGpuFabricInfo_t * gpuFabricInfo))                \
  /* GPM */                                                                    \
  X(nvmlGpmQueryDeviceSupport,                                                 \
    (nvmlDevice_t device, nvmlGpmSupport_t * gpmSupport))                      \
  X(nvmlGpmSampleAlloc, (nvmlGpmSample_t * gpmSample))                         \
  X(nvmlGpmSampleFree, (nvmlGpmSample_t gpmSample))                            \
  X(nvmlGpmSampleGet, (nvmlDevice_t device, nvmlGpmSample_t gpmSample))        \
  /* not in the reference (r525+) */                                           \
  X(nvmlGpmMigSampleGet, (nvmlDevice_t device, unsigned int gpuInstanceId,     \
                          nvmlGpmSample_t gpmSample))                          \
  X(nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t * metricsGet))

/* Functions gpudoctor does not call but other NVML clients do, which the
 * fake library (tests/fake_nvml) answers like a real A100/H100. Declared
 * here so that their signatures are checked against the reference too; the
 * loader does not resolve them. */
#define GD_NVML_OTHER_FUNCTIONS(X)                                             \
  X(nvmlDeviceGetGpuInstances,                                                 \
    (nvmlDevice_t device, unsigned int profileId,                              \
     nvmlGpuInstance_t* gpuInstances, unsigned int* count))                    \
  X(nvmlGpuInstanceGetComputeInstances,                                        \
    (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                    \
     nvmlComputeInstance_t* computeInstances, unsigned int* count))            \
  X(nvmlComputeInstanceGetInfo_v2,                                             \
    (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t * info)) \
  X(nvmlDeviceGetSupportedMemoryClocks,                                        \
    (nvmlDevice_t device, unsigned int* count, unsigned int* clocksMHz))       \
  X(nvmlDeviceGetSupportedGraphicsClocks,                                      \
    (nvmlDevice_t device, unsigned int memoryClockMHz, unsigned int* count,    \
     unsigned int* clocksMHz))                                                 \
  X(nvmlDeviceGetDisplayActive,                                                \
    (nvmlDevice_t device, nvmlEnableState_t * isActive))                       \
  X(nvmlDeviceGetDisplayMode,                                                  \
    (nvmlDevice_t device, nvmlEnableState_t * display))                        \
  X(nvmlDeviceGetClock, (nvmlDevice_t device, nvmlClockType_t clockType,       \
                         nvmlClockId_t clockId, unsigned int* clockMHz))       \
  X(nvmlUnitGetCount, (unsigned int* unitCount))                               \
  X(nvmlGetExcludedDeviceCount, (unsigned int* deviceCount))                   \
  X(nvmlSystemGetProcessName,                                                  \
    (unsigned int pid, char* name, unsigned int length))

/* Pointer typedefs: nvmlDeviceGetName_fn etc. */
#define GD_NVML_DECLARE_FN_TYPE(name, params) \
  typedef nvmlReturn_t(*name##_fn) params;
GD_NVML_FUNCTIONS(GD_NVML_DECLARE_FN_TYPE)
GD_NVML_OTHER_FUNCTIONS(GD_NVML_DECLARE_FN_TYPE)
#undef GD_NVML_DECLARE_FN_TYPE
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);

#ifdef GD_NVML_DECLARE_PROTOTYPES
#define GD_NVML_DECLARE_PROTOTYPE(name, params) nvmlReturn_t name params;
GD_NVML_FUNCTIONS(GD_NVML_DECLARE_PROTOTYPE)
GD_NVML_OTHER_FUNCTIONS(GD_NVML_DECLARE_PROTOTYPE)
#undef GD_NVML_DECLARE_PROTOTYPE
const char* nvmlErrorString(nvmlReturn_t result);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GD_NVML_API_H */
