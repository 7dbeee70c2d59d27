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
     nvmlProcessInfo_v1_t* infos))

/* Pointer typedefs: nvmlDeviceGetName_fn etc. */
#define GD_NVML_DECLARE_FN_TYPE(name, params) \
  typedef nvmlReturn_t(*name##_fn) params;
GD_NVML_FUNCTIONS(GD_NVML_DECLARE_FN_TYPE)
#undef GD_NVML_DECLARE_FN_TYPE
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);

#ifdef GD_NVML_DECLARE_PROTOTYPES
#define GD_NVML_DECLARE_PROTOTYPE(name, params) nvmlReturn_t name params;
GD_NVML_FUNCTIONS(GD_NVML_DECLARE_PROTOTYPE)
#undef GD_NVML_DECLARE_PROTOTYPE
const char* nvmlErrorString(nvmlReturn_t result);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GD_NVML_API_H */
