// DeviceFactsFromInfo on device strings as clinfo prints them for real
// devices (Adreno, Mali, Intel, NVIDIA, AMD, Apple, PoCL), every parsed field
// checked; SelectionKey's coverage of every field; and the parser on the
// device these tests run on.
#include "recq/device_facts.h"

#include <CL/cl.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "recq/context.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::recq::testing::SharedContext;

// CL_MAKE_VERSION, for CL_DEVICE_IP_VERSION_INTEL.
constexpr cl_uint MakeVersion(cl_uint major, cl_uint minor, cl_uint patch) {
  return (major << 22) | (minor << 12) | patch;
}

// A recorded device: the strings, extensions and limits clinfo shows.
struct Recorded {
  const char* label;
  DeviceInfo info;
  DeviceFacts want;
};

DeviceInfo Info(const char* name, const char* vendor, const char* version, const char* driver,
                const char* platform, const char* platform_version, const char* extensions,
                cl_device_type type) {
  DeviceInfo info;
  info.name = name;
  info.vendor = vendor;
  info.version = version;
  info.driver_version = driver;
  info.platform_name = platform;
  info.platform_version = platform_version;
  info.extensions = absl::StrSplit(extensions, ' ', absl::SkipEmpty());
  std::sort(info.extensions.begin(), info.extensions.end());
  info.type = type;
  return info;
}

// Limits: compute units, max work-group, local memory (bytes, type), images
// (0 width: none), image buffer pixels and max allocation.
void Limits(DeviceInfo& info, cl_uint cu, size_t max_wg, cl_ulong local, cl_uint local_type,
            size_t image_w, size_t image_h, size_t image_buffer, cl_ulong max_alloc) {
  info.compute_units = cu;
  info.max_work_group_size = max_wg;
  info.local_mem_bytes = local;
  info.local_mem_type = local_type;
  info.image_support = image_w != 0;
  info.image2d_max_width = image_w;
  info.image2d_max_height = image_h;
  info.image_max_buffer_size = image_buffer;
  info.max_alloc_bytes = max_alloc;
}

// Want: the limits copied as parsed facts (the parser passes them through).
DeviceFacts WantLimits(const DeviceInfo& info) {
  DeviceFacts f;
  f.kernel_family = (info.type & CL_DEVICE_TYPE_GPU) ? KernelFamily::kGpu : KernelFamily::kCpu;
  f.max_work_group_size = info.max_work_group_size;
  f.compute_units = info.compute_units;
  f.local_mem_bytes = info.local_mem_bytes;
  f.local_mem_is_global = info.local_mem_type == CL_GLOBAL;
  f.images = info.image_support;
  f.image2d_max_width = info.image2d_max_width;
  f.image2d_max_height = info.image2d_max_height;
  f.image_buffer_max_pixels = info.image_max_buffer_size;
  f.max_alloc_bytes = info.max_alloc_bytes;
  f.native_float_lanes = info.native_vector_width_float;
  return f;
}

void ExpectFacts(const DeviceFacts& got, const DeviceFacts& want, const std::string& label) {
  SCOPED_TRACE(label);
  EXPECT_EQ(KernelFamilyName(got.kernel_family), KernelFamilyName(want.kernel_family));
  EXPECT_EQ(got.max_work_group_size, want.max_work_group_size);
  EXPECT_EQ(got.compute_units, want.compute_units);
  EXPECT_EQ(got.local_mem_bytes, want.local_mem_bytes);
  EXPECT_EQ(got.local_mem_is_global, want.local_mem_is_global);
  EXPECT_EQ(DeviceVendorName(got.vendor), DeviceVendorName(want.vendor));
  EXPECT_EQ(DeviceFamilyName(got.family), DeviceFamilyName(want.family));
  EXPECT_EQ(got.adreno.generation, want.adreno.generation);
  EXPECT_EQ(got.adreno.model, want.adreno.model);
  EXPECT_EQ(got.mali.series, want.mali.series);
  EXPECT_EQ(got.mali.model, want.mali.model);
  EXPECT_EQ(MaliArchitectureName(got.mali.architecture),
            MaliArchitectureName(want.mali.architecture));
  EXPECT_EQ(IntelGpuArchitectureName(got.intel), IntelGpuArchitectureName(want.intel));
  EXPECT_EQ(got.opencl_major, want.opencl_major);
  EXPECT_EQ(got.opencl_minor, want.opencl_minor);
  EXPECT_EQ(got.subgroup_sizes, want.subgroup_sizes);
  EXPECT_EQ(got.subgroup_functions, want.subgroup_functions);
  EXPECT_EQ(got.fp16, want.fp16);
  EXPECT_EQ(IntDotProductName(got.int8_dot_product), IntDotProductName(want.int8_dot_product));
  EXPECT_EQ(got.images, want.images);
  EXPECT_EQ(got.image2d_max_width, want.image2d_max_width);
  EXPECT_EQ(got.image2d_max_height, want.image2d_max_height);
  EXPECT_EQ(got.image_buffer_max_pixels, want.image_buffer_max_pixels);
  EXPECT_EQ(got.max_alloc_bytes, want.max_alloc_bytes);
  EXPECT_EQ(got.native_float_lanes, want.native_float_lanes);
  EXPECT_EQ(got.nvidia_compute_capability, want.nvidia_compute_capability);
  EXPECT_EQ(got.Tf32MatrixInstructions(), want.Tf32MatrixInstructions());
  // The key renders every field: equal fields, equal keys.
  EXPECT_EQ(got.SelectionKey(), want.SelectionKey());
}

// --- the recorded devices ---

constexpr char kAdreno6xxExtensions[] =
    "cl_khr_3d_image_writes cl_img_egl_image cl_khr_byte_addressable_store cl_khr_depth_images "
    "cl_khr_egl_event cl_khr_egl_image cl_khr_fp16 cl_khr_gl_sharing "
    "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
    "cl_khr_image2d_from_buffer cl_khr_mipmap_image cl_khr_srgb_image_writes cl_khr_subgroups "
    "cl_qcom_create_buffer_from_image cl_qcom_ext_host_ptr cl_qcom_ion_host_ptr cl_qcom_perf_hint "
    "cl_qcom_other_image cl_qcom_subgroup_shuffle cl_qcom_vector_image_ops "
    "cl_qcom_extract_image_plane cl_qcom_android_native_buffer_host_ptr "
    "cl_qcom_protected_context cl_qcom_priority_hint cl_qcom_compressed_yuv_image_read "
    "cl_qcom_compressed_image cl_qcom_ext_host_ptr_iocoherent cl_qcom_accelerated_image_ops "
    "cl_qcom_reqd_sub_group_size";

Recorded Adreno(const char* label, const char* name, const char* version, const char* driver,
                int model, bool dot8, const char* more_extensions) {
  const std::string extensions = std::string(kAdreno6xxExtensions) + " " + more_extensions;
  Recorded r{label,
             Info(name, "QUALCOMM", version, driver, "QUALCOMM Snapdragon(TM)", driver,
                  extensions.c_str(), CL_DEVICE_TYPE_GPU),
             {}};
  Limits(r.info, model >= 700 ? 6 : 2, 1024, 32768, CL_LOCAL, 16384, 16384, 134217728,
         model >= 700 ? 3221225472ull : 1073741824ull);
  r.want = WantLimits(r.info);
  r.want.vendor = DeviceVendor::kQualcomm;
  r.want.family = DeviceFamily::kAdreno;
  r.want.adreno = {model / 100, model};
  r.want.opencl_major = version[7] - '0';
  r.want.opencl_minor = 0;
  // 6xx and 7xx run waves of 64 or 128 (cl_qcom_reqd_sub_group_size's
  // "half" and "full"); 8xx is not in the table.
  if (model < 800) r.want.subgroup_sizes = {64, 128};
  r.want.subgroup_functions = true;
  r.want.fp16 = true;
  r.want.int8_dot_product = dot8 ? IntDotProduct::kQcom : IntDotProduct::kNone;
  return r;
}

constexpr char kMaliExtensions[] =
    "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
    "cl_khr_byte_addressable_store cl_khr_3d_image_writes cl_khr_int64_base_atomics "
    "cl_khr_int64_extended_atomics cl_khr_fp16 cl_khr_icd cl_khr_egl_image "
    "cl_khr_image2d_from_buffer cl_khr_depth_images cl_khr_subgroups cl_arm_core_id "
    "cl_arm_printf cl_arm_thread_limit_hint cl_arm_non_uniform_work_group_size "
    "cl_arm_import_memory cl_arm_shared_virtual_memory cl_arm_integer_dot_product_int8 "
    "cl_arm_integer_dot_product_accumulate_int8 cl_arm_integer_dot_product_accumulate_int16";

Recorded Mali(const char* label, const char* name, const char* version, int model,
              MaliArchitecture architecture, std::vector<uint32_t> subgroups, size_t max_wg,
              cl_uint cu) {
  Recorded r{label,
             Info(name, "ARM", version, version[7] == '3' ? "3.0" : "2.0", "ARM Platform", version,
                  kMaliExtensions, CL_DEVICE_TYPE_GPU),
             {}};
  Limits(r.info, cu, max_wg, 32768, CL_GLOBAL, 65536, 65536, 65536, 2147483648ull);
  r.want = WantLimits(r.info);
  r.want.vendor = DeviceVendor::kArm;
  r.want.family = DeviceFamily::kMali;
  r.want.mali = {'G', model, architecture};
  r.want.opencl_major = version[7] - '0';
  r.want.subgroup_sizes = std::move(subgroups);
  r.want.subgroup_functions = true;
  r.want.fp16 = true;
  r.want.int8_dot_product = IntDotProduct::kArm;
  return r;
}

constexpr char kIntelNeoExtensions[] =
    "cl_khr_byte_addressable_store cl_khr_device_uuid cl_khr_fp16 "
    "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics cl_khr_icd "
    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
    "cl_intel_command_queue_families cl_intel_subgroups cl_intel_required_subgroup_size "
    "cl_intel_subgroups_short cl_khr_spir cl_intel_accelerator cl_intel_driver_diagnostics "
    "cl_khr_priority_hints cl_khr_throttle_hints cl_khr_create_command_queue "
    "cl_intel_subgroups_char cl_intel_subgroups_long cl_khr_il_program "
    "cl_khr_subgroup_extended_types cl_khr_subgroup_ballot cl_khr_subgroup_shuffle "
    "cl_intel_device_attribute_query cl_khr_suggested_local_work_size "
    "cl_intel_unified_shared_memory cl_khr_int64_base_atomics cl_khr_int64_extended_atomics "
    "cl_khr_image2d_from_buffer cl_khr_depth_images cl_khr_3d_image_writes "
    "cl_intel_media_block_io cl_khr_integer_dot_product cl_khr_pci_bus_info";

Recorded Intel(const char* label, const char* name, const char* driver, cl_uint ip_version,
               IntelGpuArchitecture architecture, std::vector<size_t> subgroups, cl_uint cu) {
  Recorded r{
      label,
      Info(name, "Intel(R) Corporation", "OpenCL 3.0 NEO ", driver, "Intel(R) OpenCL Graphics",
           "OpenCL 3.0 ", kIntelNeoExtensions, CL_DEVICE_TYPE_GPU),
      {}};
  Limits(r.info, cu, 1024, 65536, CL_LOCAL, 16384, 16384, 268435456, 4294959104ull);
  r.info.sub_group_sizes_intel = subgroups;
  r.info.ip_version_intel = ip_version;
  r.want = WantLimits(r.info);
  r.want.vendor = DeviceVendor::kIntel;
  r.want.family = DeviceFamily::kIntelGpu;
  r.want.intel = architecture;
  r.want.opencl_major = 3;
  r.want.subgroup_sizes.assign(subgroups.begin(), subgroups.end());
  r.want.subgroup_functions = true;  // cl_intel_subgroups
  r.want.fp16 = true;
  r.want.int8_dot_product = IntDotProduct::kKhr;
  return r;
}

std::vector<Recorded> RecordedDevices() {
  std::vector<Recorded> all;
  // Adreno 630 and 660 name the model only in CL_DEVICE_VERSION.
  all.push_back(
      Adreno("Adreno 630 (Snapdragon 845)", "QUALCOMM Adreno(TM)", "OpenCL 2.0 Adreno(TM) 630",
             "OpenCL 2.0 QUALCOMM build: commit #3dad7f8ed7 changeid #I3f3b8a1fd3 "
             "Date: 03/06/20 Fri Local Branch:  Remote Branch: "
             "refs/tags/AU_LINUX_ANDROID_LA.UM.8.3.R1.10.00.00.597.046 Compiler E031.37.12.01",
             630, false, ""));
  all.push_back(Adreno("Adreno 660 (Snapdragon 888)", "QUALCOMM Adreno(TM)",
                       "OpenCL 2.0 Adreno(TM) 660",
                       "OpenCL 2.0 QUALCOMM build: commit #a9ac6e4b66 changeid #I16e1c76ce9 "
                       "Date: 08/19/21 Thu Local Branch:  Remote Branch:  Compiler E031.37.12.06",
                       660, true, "cl_qcom_dot_product8 cl_qcom_bitreverse"));
  all.push_back(Adreno("Adreno 740 (Snapdragon 8 Gen 2)", "QUALCOMM Adreno(TM) 740",
                       "OpenCL 3.0 Adreno(TM) 740",
                       "OpenCL 3.0 QUALCOMM build: commit unknown Compiler E031.42.23.05", 740,
                       true, "cl_qcom_dot_product8 cl_qcom_bitreverse cl_khr_command_buffer"));
  all.push_back(Adreno("Adreno 750 (Snapdragon 8 Gen 3)", "QUALCOMM Adreno(TM) 750",
                       "OpenCL 3.0 Adreno(TM) 750",
                       "OpenCL 3.0 QUALCOMM build: commit unknown Compiler E031.45.02.16", 750,
                       true, "cl_qcom_dot_product8 cl_khr_command_buffer"));
  all.push_back(Adreno("Adreno 830 (Snapdragon 8 Elite)", "QUALCOMM Adreno(TM) 830",
                       "OpenCL 3.0 Adreno(TM) 830",
                       "OpenCL 3.0 QUALCOMM build: commit unknown Compiler E031.47.18.20", 830,
                       true, "cl_qcom_dot_product8 cl_khr_command_buffer"));

  all.push_back(Mali("Mali-G76 (Exynos 9820)", "Mali-G76",
                     "OpenCL 2.0 v1.r19p0-01rel0.1904d2b10ac4a9dc3b4ffb93c1d4d6c0", 76,
                     MaliArchitecture::kBifrost, {8}, 384, 12));
  all.push_back(Mali("Mali-G78 (Tensor G1)", "Mali-G78",
                     "OpenCL 3.0 v1.r32p1-01eac0.2819f9d4dbe0b5a2f89c835d8484f9cd", 78,
                     MaliArchitecture::kValhall, {16}, 512, 20));
  all.push_back(Mali("Mali-G710 (Tensor G2)", "Mali-G710",
                     "OpenCL 3.0 v1.r36p0-01eac0.b39a9a1d6b5ec6ec3f4b5cfc80b2e7bd", 710,
                     MaliArchitecture::kValhall, {16}, 1024, 7));
  all.push_back(Mali("Mali-G715 (Dimensity 9200)", "Mali-G715-Immortalis MC11",
                     "OpenCL 3.0 v1.r38p1-01eac0.c1a71ccca2acf211eb87c5db5322f569", 715,
                     MaliArchitecture::kValhall, {16}, 1024, 11));
  all.push_back(Mali("Mali-G720 (Dimensity 9300)", "Immortalis-G720 MC12",
                     "OpenCL 3.0 v1.r44p1-00eac0.0a5a5d2d0b5f2e3b9ce2b6ae9f0c2c5f", 720,
                     MaliArchitecture::kFifthGen, {16}, 1024, 12));

  // UHD 630 with a driver that predates CL_DEVICE_IP_VERSION_INTEL: the name
  // decides; the others report the IP version.
  all.push_back(Intel("Intel UHD Graphics 630 (Coffee Lake)", "Intel(R) UHD Graphics 630 [0x3e92]",
                      "22.43.24595.35", 0, IntelGpuArchitecture::kGen, {8, 16, 32}, 24));
  all.push_back(Intel("Intel Iris Xe (Tiger Lake)", "Intel(R) Iris(R) Xe Graphics [0x9a49]",
                      "23.35.27191.9", MakeVersion(12, 0, 0), IntelGpuArchitecture::kXe,
                      {8, 16, 32}, 96));
  all.push_back(Intel("Intel UHD Graphics 770 (Alder Lake), no IP version",
                      "Intel(R) UHD Graphics 770 [0x4680]", "22.43.24595.35", 0,
                      IntelGpuArchitecture::kXe, {8, 16, 32}, 32));
  all.push_back(Intel("Intel Arc A770", "Intel(R) Arc(TM) A770 Graphics", "24.13.29138.7",
                      MakeVersion(12, 55, 8), IntelGpuArchitecture::kXe, {8, 16, 32}, 512));

  {
    Recorded r{"NVIDIA H100 (CUDA driver, OpenCL 3.0)",
               Info("NVIDIA H100 80GB HBM3", "NVIDIA Corporation", "OpenCL 3.0 CUDA", "550.54.15",
                    "NVIDIA CUDA", "OpenCL 3.0 CUDA 12.4.131",
                    "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
                    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
                    "cl_khr_fp64 cl_khr_3d_image_writes cl_khr_byte_addressable_store cl_khr_icd "
                    "cl_khr_gl_sharing cl_nv_compiler_options cl_nv_device_attribute_query "
                    "cl_nv_pragma_unroll cl_nv_copy_opts cl_khr_gl_event cl_nv_create_buffer "
                    "cl_khr_int64_base_atomics cl_khr_int64_extended_atomics "
                    "cl_nv_kernel_attribute cl_khr_device_uuid cl_khr_pci_bus_info "
                    "cl_khr_external_semaphore cl_khr_external_memory "
                    "cl_khr_external_semaphore_opaque_fd cl_khr_external_memory_opaque_fd "
                    "cl_khr_semaphore cl_khr_command_buffer",
                    CL_DEVICE_TYPE_GPU),
               {}};
    Limits(r.info, 132, 1024, 49152, CL_LOCAL, 32768, 32768, 268435456, 21265334272ull);
    r.info.compute_capability_nv = 90;  // CL_DEVICE_COMPUTE_CAPABILITY_*_NV: 9.0
    r.want = WantLimits(r.info);
    r.want.vendor = DeviceVendor::kNvidia;
    r.want.family = DeviceFamily::kNvidiaGpu;
    r.want.nvidia_compute_capability = 90;
    r.want.opencl_major = 3;
    r.want.subgroup_sizes = {32};  // no sub-group extension: the warp
    all.push_back(std::move(r));
  }
  for (bool rdna : {true, false}) {
    Recorded r{rdna ? "AMD Radeon RX 6800 XT (ROCm, gfx1030, wave32)"
                    : "AMD Instinct MI210 (ROCm, gfx90a, no attribute query)",
               Info(rdna ? "gfx1030" : "gfx90a:sramecc+:xnack-", "Advanced Micro Devices, Inc.",
                    "OpenCL 2.0 ", "3590.0 (HSA1.1,LC)", "AMD Accelerated Parallel Processing",
                    "OpenCL 2.1 AMD-APP (3590.0)",
                    rdna ? "cl_khr_fp64 cl_khr_global_int32_base_atomics cl_khr_fp16 "
                           "cl_khr_subgroups cl_khr_3d_image_writes cl_khr_byte_addressable_store "
                           "cl_khr_image2d_from_buffer cl_amd_device_attribute_query "
                           "cl_amd_media_ops cl_amd_media_ops2 cl_khr_int64_base_atomics"
                         : "cl_khr_fp64 cl_khr_global_int32_base_atomics cl_khr_fp16 "
                           "cl_khr_subgroups cl_khr_byte_addressable_store cl_amd_media_ops",
                    CL_DEVICE_TYPE_GPU),
               {}};
    Limits(r.info, rdna ? 36 : 104, 256, 65536, CL_LOCAL, rdna ? 16384 : 0, rdna ? 16384 : 0,
           rdna ? 134217728 : 0, 14588628172ull);
    r.info.wavefront_width_amd = rdna ? 32 : 0;
    r.want = WantLimits(r.info);
    r.want.vendor = DeviceVendor::kAmd;
    r.want.family = DeviceFamily::kAmdGpu;
    r.want.opencl_major = 2;
    r.want.subgroup_sizes = {rdna ? 32u : 64u};
    r.want.subgroup_functions = true;
    r.want.fp16 = true;
    all.push_back(std::move(r));
  }
  {
    Recorded r{"Apple M1",
               Info("Apple M1", "Apple", "OpenCL 1.2 ", "1.2 1.0", "Apple",
                    "OpenCL 1.2 (Nov 13 2021 00:45:09)",
                    "cl_APPLE_SetMemObjectDestructor cl_APPLE_ContextLoggingFunctions "
                    "cl_APPLE_clut cl_APPLE_query_kernel_names cl_APPLE_gl_sharing "
                    "cl_khr_gl_event cl_khr_byte_addressable_store "
                    "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
                    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics "
                    "cl_khr_3d_image_writes cl_khr_image2d_from_buffer cl_khr_depth_images",
                    CL_DEVICE_TYPE_GPU),
               {}};
    Limits(r.info, 8, 256, 32768, CL_LOCAL, 16384, 16384, 268435456, 1073741824ull);
    r.want = WantLimits(r.info);
    r.want.vendor = DeviceVendor::kApple;
    r.want.family = DeviceFamily::kAppleGpu;
    r.want.opencl_major = 1;
    r.want.opencl_minor = 2;
    r.want.subgroup_sizes = {32};
    all.push_back(std::move(r));
  }
  constexpr char kPoclExtensions[] =
      "cl_khr_byte_addressable_store cl_khr_global_int32_base_atomics "
      "cl_khr_global_int32_extended_atomics cl_khr_local_int32_base_atomics "
      "cl_khr_local_int32_extended_atomics cl_khr_3d_image_writes cl_khr_command_buffer "
      "cl_khr_spir cl_khr_int64_base_atomics cl_khr_int64_extended_atomics cl_khr_fp64";
  {
    Recorded r{"PoCL 3.1 pthread (Debian 12)",
               Info("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", "GenuineIntel",
                    "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512",
                    "3.1+debian", "Portable Computing Language",
                    "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC, SPIR, LLVM 15.0.6, "
                    "SLEEF, DISTRO, POCL_DEBUG",
                    kPoclExtensions, CL_DEVICE_TYPE_CPU),
               {}};
    Limits(r.info, 2, 4096, 2097152, CL_GLOBAL, 8192, 8192, 134217728, 2147483648ull);
    r.want = WantLimits(r.info);
    r.want.vendor = DeviceVendor::kIntel;
    r.want.family = DeviceFamily::kPoclCpu;
    r.want.opencl_major = 3;
    all.push_back(std::move(r));
  }
  {
    Recorded r{"PoCL 6.0 cpu (generic x86-64-v3 build)",
               Info("cpu-x86-64-v3-AMD Ryzen 9 7950X 16-Core Processor", "AuthenticAMD",
                    "OpenCL 3.0 PoCL HSTR: cpu-x86_64-pc-linux-gnu-x86-64-v3", "6.0",
                    "Portable Computing Language",
                    "OpenCL 3.0 PoCL 6.0  Linux, Release, RELOC, SPIR-V, LLVM 18.1.8, SLEEF, "
                    "DISTRO, POCL_DEBUG",
                    "cl_khr_byte_addressable_store cl_khr_global_int32_base_atomics "
                    "cl_khr_fp16 cl_khr_fp64 cl_khr_subgroups cl_intel_unified_shared_memory "
                    "cl_khr_integer_dot_product cl_khr_command_buffer",
                    CL_DEVICE_TYPE_CPU),
               {}};
    Limits(r.info, 32, 4096, 4194304, CL_GLOBAL, 0, 0, 0, 33554432000ull);
    r.want = WantLimits(r.info);
    r.want.vendor = DeviceVendor::kAmd;
    r.want.family = DeviceFamily::kPoclCpu;
    r.want.opencl_major = 3;
    r.want.subgroup_functions = true;
    r.want.fp16 = true;
    r.want.int8_dot_product = IntDotProduct::kKhr;
    all.push_back(std::move(r));
  }
  {
    Recorded r{"Intel CPU runtime",
               Info("Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz", "Intel(R) Corporation",
                    "OpenCL 3.0 (Build 0)", "2023.16.7.0.21_160000", "Intel(R) OpenCL",
                    "OpenCL 3.0 WINDOWS", kPoclExtensions, CL_DEVICE_TYPE_CPU),
               {}};
    Limits(r.info, 16, 8192, 262144, CL_GLOBAL, 16384, 16384, 4294967296ull, 8589934592ull);
    r.want = WantLimits(r.info);
    r.want.vendor = DeviceVendor::kIntel;
    r.want.family = DeviceFamily::kOtherCpu;
    r.want.opencl_major = 3;
    all.push_back(std::move(r));
  }
  return all;
}

TEST(DeviceFactsTest, ParsesRecordedDevices) {
  for (const Recorded& r : RecordedDevices()) {
    ExpectFacts(DeviceFactsFromInfo(r.info), r.want, r.label);
  }
}

TEST(DeviceFactsTest, RecordedDevicesHaveDistinctKeys) {
  std::vector<std::string> keys;
  for (const Recorded& r : RecordedDevices())
    keys.push_back(DeviceFactsFromInfo(r.info).SelectionKey());
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(DeviceFactsTest, NamedPredicates) {
  std::vector<Recorded> all = RecordedDevices();
  for (const Recorded& r : all) {
    const DeviceFacts f = DeviceFactsFromInfo(r.info);
    SCOPED_TRACE(r.label);
    const bool gpu_device = (r.info.type & CL_DEVICE_TYPE_GPU) != 0;
    EXPECT_EQ(f.IsGpuDevice(), gpu_device);
    EXPECT_EQ(f.GpuKernels(), gpu_device);
    EXPECT_EQ(f.CpuKernels(), !gpu_device);
    // Only Mali (a GPU whose local memory is global memory) skips staging.
    EXPECT_EQ(f.LocalMemoryTilesPay(), f.family != DeviceFamily::kMali);
    EXPECT_TRUE(f.LocalMemoryFits(f.local_mem_bytes));
    EXPECT_FALSE(f.LocalMemoryFits(f.local_mem_bytes + 1));
  }
  DeviceFacts unknown;
  EXPECT_TRUE(unknown.LocalMemoryFits(uint64_t{1} << 40));
  EXPECT_TRUE(unknown.LocalMemoryTilesPay());
  EXPECT_FALSE(unknown.IsGpuDevice());
}

// tf32 matrix instructions: NVIDIA's driver on compute capability 8.0 and
// later; not before (a T4 is 7.5), and not where another vendor's device
// reports the value.
TEST(DeviceFactsTest, Tf32MatrixInstructionsFromTheComputeCapability) {
  std::vector<Recorded> all = RecordedDevices();
  for (Recorded& r : all) {
    SCOPED_TRACE(r.label);
    for (cl_uint cc : {0u, 75u, 80u, 90u}) {
      r.info.compute_capability_nv = cc;
      const DeviceFacts f = DeviceFactsFromInfo(r.info);
      const bool nvidia = f.family == DeviceFamily::kNvidiaGpu;
      EXPECT_EQ(f.nvidia_compute_capability, nvidia ? cc : 0u);
      EXPECT_EQ(f.Tf32MatrixInstructions(), nvidia && cc >= 80);
      EXPECT_EQ(f.MatrixUnits(), nvidia && cc >= 80);
      EXPECT_EQ(f.MatrixInstructionsInPtx(), nvidia && cc >= 80);
      // Emulated: the variants fit everywhere, built without the PTX.
      DeviceFacts emulated = f;
      emulated.matrix_units_emulated = true;
      EXPECT_TRUE(emulated.MatrixUnits());
      EXPECT_FALSE(emulated.MatrixInstructionsInPtx());
      if (nvidia && cc != 0) {
        EXPECT_NE(f.Describe().find("compute capability " + std::to_string(cc / 10) + "." +
                                    std::to_string(cc % 10)),
                  std::string::npos)
            << f.Describe();
      }
    }
  }
}

TEST(DeviceFactsTest, MaliArchitectureFromTheModelNumber) {
  struct Case {
    const char* name;
    char series;
    int model;
    MaliArchitecture architecture;
  };
  for (const Case& c : std::vector<Case>{
           {"Mali-T880", 'T', 880, MaliArchitecture::kMidgard},
           {"Mali-T760 MP8", 'T', 760, MaliArchitecture::kMidgard},
           {"Mali-G71", 'G', 71, MaliArchitecture::kBifrost},
           {"Mali-G52 MC2", 'G', 52, MaliArchitecture::kBifrost},
           {"Mali-G57 MC5", 'G', 57, MaliArchitecture::kValhall},
           {"Mali-G77", 'G', 77, MaliArchitecture::kValhall},
           {"Mali-G310", 'G', 310, MaliArchitecture::kValhall},
           {"Mali-G610 MC6", 'G', 610, MaliArchitecture::kValhall},
           {"Mali-G620", 'G', 620, MaliArchitecture::kFifthGen},
           {"Immortalis-G925", 'G', 925, MaliArchitecture::kFifthGen},
           {"Mali-G99", 'G', 99, MaliArchitecture::kUnknown},
       }) {
    DeviceInfo info = Info(c.name, "ARM", "OpenCL 3.0 v1.r40p0", "3.0", "ARM Platform",
                           "OpenCL 3.0", "", CL_DEVICE_TYPE_GPU);
    const DeviceFacts f = DeviceFactsFromInfo(info);
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DeviceFamilyName(f.family), std::string("mali"));
    EXPECT_EQ(f.mali.series, c.series);
    EXPECT_EQ(f.mali.model, c.model);
    EXPECT_EQ(MaliArchitectureName(f.mali.architecture), MaliArchitectureName(c.architecture));
  }
}

TEST(DeviceFactsTest, UnparsedNamesLeaveFactsUnknown) {
  DeviceInfo adreno = Info("QUALCOMM Adreno(TM)", "QUALCOMM", "OpenCL 2.0 Adreno(TM)", "", "", "",
                           "", CL_DEVICE_TYPE_GPU);
  DeviceFacts a = DeviceFactsFromInfo(adreno);
  EXPECT_EQ(a.family, DeviceFamily::kAdreno);
  EXPECT_EQ(a.adreno.model, 0);
  EXPECT_EQ(a.adreno.generation, 0);
  EXPECT_TRUE(a.subgroup_sizes.empty());

  DeviceInfo mali = Info("Mali-", "ARM", "OpenCL", "", "", "", "", CL_DEVICE_TYPE_GPU);
  DeviceFacts m = DeviceFactsFromInfo(mali);
  EXPECT_EQ(m.family, DeviceFamily::kMali);
  EXPECT_EQ(m.mali.model, 0);
  EXPECT_EQ(m.opencl_major, 0u);

  DeviceInfo other = Info("Vivante GC7000", "Vivante Corporation", "OpenCL 3.0 ", "6.4", "", "", "",
                          CL_DEVICE_TYPE_GPU);
  DeviceFacts o = DeviceFactsFromInfo(other);
  EXPECT_EQ(o.family, DeviceFamily::kOtherGpu);
  EXPECT_EQ(o.vendor, DeviceVendor::kUnknown);
  EXPECT_TRUE(o.IsGpuDevice());

  DeviceInfo accelerator = Info("FPGA Emulation Device", "Intel(R) Corporation", "OpenCL 1.2 ",
                                "2023", "", "", "", CL_DEVICE_TYPE_ACCELERATOR);
  DeviceFacts x = DeviceFactsFromInfo(accelerator);
  EXPECT_EQ(x.family, DeviceFamily::kUnknown);
  EXPECT_EQ(x.kernel_family, KernelFamily::kCpu);
  EXPECT_FALSE(x.IsGpuDevice());
}

// Every field is in SelectionKey: changing any one changes the key.
TEST(DeviceFactsTest, SelectionKeyCoversEveryField) {
  const DeviceFacts base = DeviceFactsFromInfo(RecordedDevices()[2].info);  // Adreno 740
  const std::vector<std::pair<const char*, std::function<void(DeviceFacts&)>>> edits = {
      {"kernel_family", [](DeviceFacts& f) { f.kernel_family = KernelFamily::kCpu; }},
      {"max_work_group_size", [](DeviceFacts& f) { f.max_work_group_size = 512; }},
      {"compute_units", [](DeviceFacts& f) { f.compute_units += 1; }},
      {"local_mem_bytes", [](DeviceFacts& f) { f.local_mem_bytes = 65536; }},
      {"local_mem_is_global", [](DeviceFacts& f) { f.local_mem_is_global = true; }},
      {"vendor", [](DeviceFacts& f) { f.vendor = DeviceVendor::kArm; }},
      {"family", [](DeviceFacts& f) { f.family = DeviceFamily::kOtherGpu; }},
      {"adreno.generation", [](DeviceFacts& f) { f.adreno.generation = 6; }},
      {"adreno.model", [](DeviceFacts& f) { f.adreno.model = 741; }},
      {"mali.series", [](DeviceFacts& f) { f.mali.series = 'G'; }},
      {"mali.model", [](DeviceFacts& f) { f.mali.model = 78; }},
      {"mali.architecture",
       [](DeviceFacts& f) { f.mali.architecture = MaliArchitecture::kValhall; }},
      {"intel", [](DeviceFacts& f) { f.intel = IntelGpuArchitecture::kXe; }},
      {"opencl_major", [](DeviceFacts& f) { f.opencl_major = 2; }},
      {"opencl_minor", [](DeviceFacts& f) { f.opencl_minor = 1; }},
      {"subgroup_sizes", [](DeviceFacts& f) { f.subgroup_sizes = {64}; }},
      {"subgroup_functions", [](DeviceFacts& f) { f.subgroup_functions = false; }},
      {"fp16", [](DeviceFacts& f) { f.fp16 = false; }},
      {"int8_dot_product", [](DeviceFacts& f) { f.int8_dot_product = IntDotProduct::kKhr; }},
      {"images", [](DeviceFacts& f) { f.images = false; }},
      {"image2d_max_width", [](DeviceFacts& f) { f.image2d_max_width = 8192; }},
      {"image2d_max_height", [](DeviceFacts& f) { f.image2d_max_height = 8192; }},
      {"image_buffer_max_pixels", [](DeviceFacts& f) { f.image_buffer_max_pixels = 65536; }},
      {"max_alloc_bytes", [](DeviceFacts& f) { f.max_alloc_bytes = 1; }},
      {"nvidia_compute_capability", [](DeviceFacts& f) { f.nvidia_compute_capability = 90; }},
      {"matrix_units_emulated", [](DeviceFacts& f) { f.matrix_units_emulated = true; }},
  };
  for (const auto& [field, edit] : edits) {
    DeviceFacts changed = base;
    edit(changed);
    EXPECT_NE(changed.SelectionKey(), base.SelectionKey()) << field;
  }
}

// The float lanes of a vector register size the CPU kernels' register
// tiles: 128 accumulator lanes where they are 16 wide (AVX-512) or unknown,
// 8 registers' worth where they are 8 wide or narrower. CPU keys carry the
// width; GPU keys do not (GPU kernels do not read it).
TEST(DeviceFactsTest, FloatLanesSizeTheCpuTiles) {
  std::vector<Recorded> all = RecordedDevices();
  for (Recorded& r : all) {
    SCOPED_TRACE(r.label);
    const DeviceFacts unknown = DeviceFactsFromInfo(r.info);
    EXPECT_EQ(unknown.native_float_lanes, 0u);
    EXPECT_EQ(unknown.CpuAccumulatorLanes(), 128);
    for (const auto& [lanes, accumulators] :
         std::vector<std::pair<cl_uint, int64_t>>{{16, 128}, {8, 64}, {4, 32}}) {
      r.info.native_vector_width_float = lanes;
      const DeviceFacts f = DeviceFactsFromInfo(r.info);
      EXPECT_EQ(f.native_float_lanes, lanes);
      EXPECT_EQ(f.CpuAccumulatorLanes(), accumulators);
      EXPECT_EQ(f.SelectionKey() != unknown.SelectionKey(), f.CpuKernels()) << f.SelectionKey();
      EXPECT_NE(f.Describe().find(std::to_string(lanes) + "-lane float vectors"), std::string::npos)
          << f.Describe();
    }
  }
}

TEST(DeviceFactsTest, DescribeNamesFamilyAndFeatures) {
  std::vector<Recorded> all = RecordedDevices();
  const std::string adreno = DeviceFactsFromInfo(all[2].info).Describe();
  EXPECT_NE(adreno.find("Adreno 7xx (Adreno 740)"), std::string::npos) << adreno;
  EXPECT_NE(adreno.find("32 KiB local memory"), std::string::npos) << adreno;
  EXPECT_NE(adreno.find("sub-groups 64/128"), std::string::npos) << adreno;
  EXPECT_NE(adreno.find("fp16"), std::string::npos) << adreno;
  EXPECT_NE(adreno.find("images up to 16384x16384"), std::string::npos) << adreno;
  const std::string mali = DeviceFactsFromInfo(all[6].info).Describe();
  EXPECT_NE(mali.find("Mali-G78 (valhall)"), std::string::npos) << mali;
  EXPECT_NE(mali.find("(in global memory)"), std::string::npos) << mali;
}

// The device the tests run on: the queries fill what the parser reads.
TEST(DeviceFactsTest, ThisDevice) {
  const DeviceInfo& info = SharedContext().device_info();
  const DeviceFacts f = DeviceFactsFromInfo(info);
  EXPECT_GT(f.local_mem_bytes, 0u);
  EXPECT_EQ(f.local_mem_bytes, info.local_mem_bytes);
  EXPECT_EQ(f.max_alloc_bytes, info.max_alloc_bytes);
  EXPECT_EQ(f.images, info.image_support);
  if (info.image_support) {
    EXPECT_GT(f.image2d_max_width, 0u);
    EXPECT_GT(f.image2d_max_height, 0u);
  }
  EXPECT_EQ(f.fp16, info.HasExtension("cl_khr_fp16"));
  EXPECT_GT(f.opencl_major, 0u);
  if (info.platform_name == "Portable Computing Language" &&
      (info.type & CL_DEVICE_TYPE_CPU) != 0) {
    EXPECT_EQ(f.family, DeviceFamily::kPoclCpu);
    EXPECT_EQ(f.kernel_family, KernelFamily::kCpu);
    EXPECT_TRUE(f.local_mem_is_global);
    EXPECT_TRUE(f.LocalMemoryTilesPay());  // a CPU: local memory is cached memory
    // PoCL reports its target's width: 4 (SSE), 8 (AVX2) or 16 (AVX-512).
    EXPECT_GE(f.native_float_lanes, 4u);
  }
  EXPECT_EQ(f.native_float_lanes, info.native_vector_width_float);
}

}  // namespace
}  // namespace recq
