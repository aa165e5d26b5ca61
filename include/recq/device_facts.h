// DeviceFacts: what kernel selection knows about a device.
//
//   DeviceInfo (recq/context.h)  the raw strings and limits OpenCL reports
//        |  DeviceFactsFromInfo (a pure parser: no OpenCL calls)
//        v
//   DeviceFacts                   vendor, family (Adreno generation, Mali
//                                 architecture, Intel Gen or Xe), limits,
//                                 extensions that kernels could use
//        |  the engine sets kernel_family from EngineOptions::kernel_target
//        v
//   KernelVariant::fits / lower  read through LoweringContext::device()
//
// Selectors (built-in and custom ops) read only DeviceFacts, never the raw
// DeviceInfo, so that the same facts give the same kernels: an engine file
// and the tuning cache store SelectionKey() and are reused only where it is
// equal. A field added here must be added to SelectionKey too.
#ifndef RECQ_DEVICE_FACTS_H_
#define RECQ_DEVICE_FACTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace recq {

struct DeviceInfo;

// The two families of kernels recq has: GPU kernels (one or a few outputs per
// work-item, groups of 64-256) and CPU kernels (vector work-items, small
// groups). The device type picks one unless EngineOptions::kernel_target
// forces it.
enum class KernelFamily : uint8_t { kCpu, kGpu };

// Who made the hardware (for CPUs, CL_DEVICE_VENDOR's CPU vendor).
enum class DeviceVendor : uint8_t {
  kUnknown,
  kQualcomm,
  kArm,
  kIntel,
  kNvidia,
  kAmd,
  kApple,
  kImagination,
};

// The device family; a GPU family where the device is a GPU of a known line.
enum class DeviceFamily : uint8_t {
  kUnknown,    // neither a GPU nor a CPU (an accelerator), or unparsed
  kAdreno,     // Qualcomm Adreno: see AdrenoInfo
  kMali,       // Arm Mali: see MaliInfo
  kIntelGpu,   // see IntelGpuArchitecture
  kNvidiaGpu,  //
  kAmdGpu,     //
  kAppleGpu,   //
  kPowerVr,    // Imagination PowerVR
  kOtherGpu,   // a GPU of another or unrecognised line
  kPoclCpu,    // PoCL's CPU device (pthread, basic, cpu-minimal...)
  kOtherCpu,   // another OpenCL CPU runtime (Intel's, for one)
};

// Adreno: the generation (6 for the 6xx line: 630, 660...) and the model.
struct AdrenoInfo {
  int generation = 0;  // 0: unknown
  int model = 0;       // 630, 740, 830...; 0: unknown
};

enum class MaliArchitecture : uint8_t { kUnknown, kMidgard, kBifrost, kValhall, kFifthGen };

// Mali: the series ('T' or 'G'), the model number (76 for G76, 710 for
// G710, 880 for T880) and the architecture the model belongs to.
struct MaliInfo {
  char series = 0;  // 0: unknown
  int model = 0;
  MaliArchitecture architecture = MaliArchitecture::kUnknown;
};

// Intel GPUs: Gen9 to Gen11 (HD, UHD 6xx, Iris Plus) or Xe (Gen12 and later:
// Iris Xe, UHD 7xx, Arc, Data Center GPU).
enum class IntelGpuArchitecture : uint8_t { kUnknown, kGen, kXe };

// Which 8-bit integer dot-product extension the device has (the first of
// these in this order): cl_khr_integer_dot_product,
// cl_arm_integer_dot_product_int8 (or its _accumulate_ forms),
// cl_qcom_dot_product8.
enum class IntDotProduct : uint8_t { kNone, kKhr, kArm, kQcom };

struct DeviceFacts {
  // --- read by the built-in selectors ---
  KernelFamily kernel_family = KernelFamily::kCpu;
  size_t max_work_group_size = 0;  // CL_DEVICE_MAX_WORK_GROUP_SIZE; 0: unknown
  uint32_t compute_units = 0;      // CL_DEVICE_MAX_COMPUTE_UNITS; 0: unknown
  uint64_t local_mem_bytes = 0;    // CL_DEVICE_LOCAL_MEM_SIZE; 0: unknown
  // CL_DEVICE_LOCAL_MEM_TYPE is CL_GLOBAL: local memory is a part of global
  // memory (Mali; CPUs, where it is cached like any memory).
  bool local_mem_is_global = false;

  // --- what the device is ---
  DeviceVendor vendor = DeviceVendor::kUnknown;
  DeviceFamily family = DeviceFamily::kUnknown;
  AdrenoInfo adreno;                                            // family kAdreno
  MaliInfo mali;                                                // family kMali
  IntelGpuArchitecture intel = IntelGpuArchitecture::kUnknown;  // family kIntelGpu
  uint32_t opencl_major = 0, opencl_minor = 0;  // CL_DEVICE_VERSION "OpenCL 3.0 ..."

  // --- what kernels could use ---
  // Sub-group (warp, wavefront) sizes the device runs, ascending; empty:
  // unknown. From CL_DEVICE_SUB_GROUP_SIZES_INTEL, AMD's wavefront width,
  // or known per family (NVIDIA 32, Adreno 64 and 128, Mali per
  // architecture).
  std::vector<uint32_t> subgroup_sizes;
  // cl_khr_subgroups or cl_intel_subgroups: sub-group functions in kernels.
  bool subgroup_functions = false;
  bool fp16 = false;  // cl_khr_fp16: half arithmetic
  IntDotProduct int8_dot_product = IntDotProduct::kNone;
  bool images = false;  // CL_DEVICE_IMAGE_SUPPORT
  size_t image2d_max_width = 0, image2d_max_height = 0;
  size_t image_buffer_max_pixels = 0;  // CL_DEVICE_IMAGE_MAX_BUFFER_SIZE
  uint64_t max_alloc_bytes = 0;        // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: float lanes of one vector register
  // (PoCL: 8 on AVX2 hosts, 16 on AVX-512 ones); 0: unknown.
  uint32_t native_float_lanes = 0;
  // NVIDIA's compute capability (major * 10 + minor; 0: not NVIDIA's
  // driver, or unknown). 80 and later run tf32 matrix instructions
  // (mma.sync), which NVIDIA's OpenCL compiler takes as inline PTX.
  uint32_t nvidia_compute_capability = 0;
  // Set from EngineOptions::emulate_matrix_units: the variants built on
  // matrix instructions fit a device without them too, running the same
  // tiles in plain OpenCL C (how tests hold them to the reference on PoCL).
  bool matrix_units_emulated = false;

  // --- named predicates selectors read ---
  bool GpuKernels() const { return kernel_family == KernelFamily::kGpu; }
  bool CpuKernels() const { return kernel_family == KernelFamily::kCpu; }
  // The device itself is a GPU (whatever kernel family was forced).
  bool IsGpuDevice() const;
  // CPU kernels: the float lanes that one work-item's register-blocked
  // accumulators may take without spilling. x86-64 has 16 vector registers
  // up to AVX2 (8 lanes) and 32 with AVX-512 (16 lanes). The CPU tiles were
  // sized on AVX-512 hosts, 128 lanes (8 of its registers); with 8-lane or
  // narrower vectors, 8 registers' worth, which leaves the other half of
  // the register file to the operands.
  int64_t CpuAccumulatorLanes() const {
    return native_float_lanes != 0 && native_float_lanes <= 8 ? 8 * int64_t(native_float_lanes)
                                                              : 128;
  }
  // Work-group tiles staged through local memory pay off: false on a GPU
  // whose local memory is global memory (Mali), where staging only adds
  // copies; true on CPUs and where unknown.
  bool LocalMemoryTilesPay() const { return !(local_mem_is_global && IsGpuDevice()); }
  // The device runs tf32 matrix instructions through inline PTX.
  bool Tf32MatrixInstructions() const {
    return family == DeviceFamily::kNvidiaGpu && nvidia_compute_capability >= 80;
  }
  // The variants built on matrix instructions fit: the device has them, or
  // they are emulated.
  bool MatrixUnits() const { return Tf32MatrixInstructions() || matrix_units_emulated; }
  // Those variants are built with the instructions themselves (inline PTX,
  // -DRECQ_MM_PTX), not their emulation.
  bool MatrixInstructionsInPtx() const {
    return Tf32MatrixInstructions() && !matrix_units_emulated;
  }
  // `bytes` of local memory per work-group fit (true where unknown).
  bool LocalMemoryFits(uint64_t bytes) const {
    return local_mem_bytes == 0 || bytes <= local_mem_bytes;
  }

  // SelectionKey renders every field, one canonical string: equal keys give
  // equal kernel choices. Engine files and the tuning cache compare it.
  std::string SelectionKey() const;
  // Describe is a short human-readable summary ("Adreno 7xx (740), GPU
  // kernels, 32 KiB local memory, sub-groups 64/128, fp16, images").
  std::string Describe() const;
};

// DeviceFactsFromInfo parses `info` (name, vendor, version and driver
// strings, extensions and limits) into facts; kernel_family is kGpu where
// the device type includes CL_DEVICE_TYPE_GPU. Pure: it makes no OpenCL
// call, so tests run it on recorded strings of real devices.
DeviceFacts DeviceFactsFromInfo(const DeviceInfo& info);

// Names for printing and keys: "adreno", "mali", "pocl-cpu"...; "qualcomm",
// "arm"...; "midgard", "bifrost", "valhall", "5th-gen"; "gen", "xe";
// "khr", "arm", "qcom", "none".
const char* KernelFamilyName(KernelFamily family);
const char* DeviceVendorName(DeviceVendor vendor);
const char* DeviceFamilyName(DeviceFamily family);
const char* MaliArchitectureName(MaliArchitecture architecture);
const char* IntelGpuArchitectureName(IntelGpuArchitecture architecture);
const char* IntDotProductName(IntDotProduct dot);

}  // namespace recq

#endif  // RECQ_DEVICE_FACTS_H_
