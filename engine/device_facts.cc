#include "recq/device_facts.h"

#include <CL/cl.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "recq/context.h"

namespace recq {
namespace {

bool Has(const DeviceInfo& info, absl::string_view extension) {
  return std::find(info.extensions.begin(), info.extensions.end(), extension) !=
         info.extensions.end();
}

bool HasPrefix(const DeviceInfo& info, absl::string_view prefix) {
  return std::any_of(info.extensions.begin(), info.extensions.end(),
                     [&](const std::string& e) { return absl::StartsWith(e, prefix); });
}

// NumberAfter reads the decimal number that follows `marker` in `text`
// (lower case), skipping up to `skip` characters that are not digits ("(tm) "
// after "adreno"); 0 when there is none.
int NumberAfter(absl::string_view text, absl::string_view marker, size_t skip) {
  size_t at = text.find(marker);
  if (at == absl::string_view::npos) return 0;
  size_t i = at + marker.size();
  for (size_t skipped = 0; i < text.size() && !absl::ascii_isdigit(text[i]); ++i, ++skipped) {
    if (skipped == skip) return 0;
  }
  int value = 0;
  for (; i < text.size() && absl::ascii_isdigit(text[i]) && value < 100000; ++i) {
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

DeviceVendor VendorOf(const std::string& vendor, const std::string& name) {
  const bool arm_vendor = vendor == "arm" || absl::StartsWith(vendor, "arm ") ||
                          absl::StartsWith(vendor, "arm,") || absl::StartsWith(vendor, "arm(");
  if (absl::StrContains(vendor, "qualcomm") || absl::StrContains(name, "adreno")) {
    return DeviceVendor::kQualcomm;
  }
  if (arm_vendor || absl::StrContains(name, "mali") || absl::StrContains(name, "immortalis")) {
    return DeviceVendor::kArm;
  }
  if (absl::StrContains(vendor, "nvidia")) return DeviceVendor::kNvidia;
  if (absl::StrContains(vendor, "intel")) return DeviceVendor::kIntel;  // and GenuineIntel
  if (absl::StrContains(vendor, "advanced micro devices") || vendor == "amd" ||
      absl::StrContains(vendor, "authenticamd")) {
    return DeviceVendor::kAmd;
  }
  if (absl::StrContains(vendor, "apple")) return DeviceVendor::kApple;
  if (absl::StrContains(vendor, "imagination") || absl::StrContains(name, "powervr")) {
    return DeviceVendor::kImagination;
  }
  return DeviceVendor::kUnknown;
}

// MaliOf reads "Mali-G710", "Mali-T880 MP4", "Mali-G715-Immortalis MC11" or
// "Immortalis-G925".
MaliInfo MaliOf(const std::string& name) {
  MaliInfo mali;
  size_t at = name.find("mali-");
  size_t start = at != std::string::npos ? at + 5 : std::string::npos;
  if (start == std::string::npos) {
    at = name.find("immortalis-");
    if (at != std::string::npos) start = at + 11;
  }
  if (start == std::string::npos || start + 1 >= name.size()) return mali;
  const char series = name[start];
  if (series != 'g' && series != 't') return mali;
  int model = 0;
  for (size_t i = start + 1; i < name.size() && absl::ascii_isdigit(name[i]) && model < 10000;
       ++i) {
    model = model * 10 + (name[i] - '0');
  }
  if (model == 0) return mali;
  mali.series = series == 'g' ? 'G' : 'T';
  mali.model = model;
  if (mali.series == 'T') {
    mali.architecture = MaliArchitecture::kMidgard;  // T6xx, T7xx, T8xx
  } else if (model >= 100) {
    // G310 to G715: Valhall; G620, G720, G925...: the 5th generation.
    mali.architecture =
        (model / 10) % 10 <= 1 ? MaliArchitecture::kValhall : MaliArchitecture::kFifthGen;
  } else {
    switch (model) {
      case 31:
      case 51:
      case 52:
      case 71:
      case 72:
      case 76:
        mali.architecture = MaliArchitecture::kBifrost;
        break;
      case 57:
      case 68:
      case 77:
      case 78:
        mali.architecture = MaliArchitecture::kValhall;
        break;
      default:
        break;
    }
  }
  return mali;
}

// IntelOf: CL_DEVICE_IP_VERSION_INTEL where the driver reports it (major 12
// and later: Xe), else the marketing name.
IntelGpuArchitecture IntelOf(const DeviceInfo& info, const std::string& name) {
  if (info.ip_version_intel != 0) {
    const cl_uint major = info.ip_version_intel >> 22;  // CL_VERSION_MAJOR
    if (major >= 12) return IntelGpuArchitecture::kXe;
    if (major >= 7) return IntelGpuArchitecture::kGen;
  }
  // UHD Graphics 7xx (Rocket Lake, Alder Lake and later) are Xe-LP.
  const size_t uhd = name.find("uhd graphics 7");
  const bool uhd7xx = uhd != std::string::npos && uhd + 16 <= name.size() &&
                      absl::ascii_isdigit(name[uhd + 14]) && absl::ascii_isdigit(name[uhd + 15]);
  if (absl::StrContains(name, " xe") || absl::StrContains(name, "arc(") ||
      absl::StrContains(name, " arc ") || absl::StrContains(name, "data center gpu") || uhd7xx) {
    return IntelGpuArchitecture::kXe;
  }
  if (absl::StrContains(name, "hd graphics") || absl::StrContains(name, "iris")) {
    return IntelGpuArchitecture::kGen;
  }
  return IntelGpuArchitecture::kUnknown;
}

// SubgroupSizesOf: what the driver reports, else what the family is known
// to run (Arm's and Qualcomm's optimisation guides, NVIDIA's warp).
std::vector<uint32_t> SubgroupSizesOf(const DeviceInfo& info, const DeviceFacts& f) {
  std::vector<uint32_t> sizes;
  if (!info.sub_group_sizes_intel.empty()) {
    for (size_t s : info.sub_group_sizes_intel) sizes.push_back(static_cast<uint32_t>(s));
  } else {
    switch (f.family) {
      case DeviceFamily::kNvidiaGpu:
      case DeviceFamily::kAppleGpu:
        sizes = {32};
        break;
      case DeviceFamily::kAmdGpu:
        sizes = {info.wavefront_width_amd != 0 ? info.wavefront_width_amd : 64};
        break;
      case DeviceFamily::kAdreno:
        if (f.adreno.generation == 6 || f.adreno.generation == 7) sizes = {64, 128};
        break;
      case DeviceFamily::kMali:
        if (f.mali.architecture == MaliArchitecture::kValhall ||
            f.mali.architecture == MaliArchitecture::kFifthGen) {
          sizes = {16};
        } else if (f.mali.model == 52 || f.mali.model == 76) {
          sizes = {8};
        } else if (f.mali.model == 51 || f.mali.model == 71 || f.mali.model == 72) {
          sizes = {4};
        }
        break;
      default:
        break;
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace

DeviceFacts DeviceFactsFromInfo(const DeviceInfo& info) {
  DeviceFacts f;
  const bool gpu = (info.type & CL_DEVICE_TYPE_GPU) != 0;
  const bool cpu = (info.type & CL_DEVICE_TYPE_CPU) != 0;
  f.kernel_family = gpu ? KernelFamily::kGpu : KernelFamily::kCpu;
  f.max_work_group_size = info.max_work_group_size;
  f.compute_units = info.compute_units;
  f.local_mem_bytes = info.local_mem_bytes;
  f.local_mem_is_global = info.local_mem_type == CL_GLOBAL;

  const std::string name = absl::AsciiStrToLower(info.name);
  const std::string vendor = absl::AsciiStrToLower(info.vendor);
  const std::string version = absl::AsciiStrToLower(info.version);
  const bool pocl =
      absl::StrContains(absl::AsciiStrToLower(info.platform_name), "portable computing language") ||
      absl::StrContains(version, "pocl");
  f.vendor = VendorOf(vendor, name);
  if (gpu) {
    if (absl::StrContains(name, "adreno") || absl::StrContains(version, "adreno")) {
      f.family = DeviceFamily::kAdreno;
      // Newer drivers name the model ("QUALCOMM Adreno(TM) 740"), older
      // ones only in CL_DEVICE_VERSION ("OpenCL 2.0 Adreno(TM) 630").
      int model = NumberAfter(name, "adreno", 6);
      if (model == 0) model = NumberAfter(version, "adreno", 6);
      if (model >= 100 && model <= 999) {
        f.adreno.model = model;
        f.adreno.generation = model / 100;
      }
    } else if (f.vendor == DeviceVendor::kArm) {
      f.family = DeviceFamily::kMali;
      f.mali = MaliOf(name);
    } else if (f.vendor == DeviceVendor::kIntel) {
      f.family = DeviceFamily::kIntelGpu;
      f.intel = IntelOf(info, name);
    } else if (f.vendor == DeviceVendor::kNvidia) {
      f.family = DeviceFamily::kNvidiaGpu;
    } else if (f.vendor == DeviceVendor::kAmd) {
      f.family = DeviceFamily::kAmdGpu;
    } else if (f.vendor == DeviceVendor::kApple) {
      f.family = DeviceFamily::kAppleGpu;
    } else if (f.vendor == DeviceVendor::kImagination) {
      f.family = DeviceFamily::kPowerVr;
    } else {
      f.family = DeviceFamily::kOtherGpu;
    }
  } else if (cpu) {
    f.family = pocl ? DeviceFamily::kPoclCpu : DeviceFamily::kOtherCpu;
  }

  // "OpenCL <major>.<minor> ...".
  if (absl::StartsWith(version, "opencl ")) {
    f.opencl_major = static_cast<uint32_t>(NumberAfter(version, "opencl ", 0));
    f.opencl_minor = static_cast<uint32_t>(
        NumberAfter(version, absl::StrCat("opencl ", f.opencl_major, "."), 0));
  }

  f.subgroup_sizes = SubgroupSizesOf(info, f);
  f.subgroup_functions = Has(info, "cl_khr_subgroups") || Has(info, "cl_intel_subgroups");
  f.fp16 = Has(info, "cl_khr_fp16");
  if (Has(info, "cl_khr_integer_dot_product")) {
    f.int8_dot_product = IntDotProduct::kKhr;
  } else if (HasPrefix(info, "cl_arm_integer_dot_product_")) {
    f.int8_dot_product = IntDotProduct::kArm;
  } else if (Has(info, "cl_qcom_dot_product8")) {
    f.int8_dot_product = IntDotProduct::kQcom;
  }
  f.images = info.image_support;
  if (f.images) {
    f.image2d_max_width = info.image2d_max_width;
    f.image2d_max_height = info.image2d_max_height;
    f.image_buffer_max_pixels = info.image_max_buffer_size;
  }
  f.max_alloc_bytes = info.max_alloc_bytes;
  f.native_float_lanes = info.native_vector_width_float;
  if (f.vendor == DeviceVendor::kNvidia) f.nvidia_compute_capability = info.compute_capability_nv;
  return f;
}

bool DeviceFacts::IsGpuDevice() const {
  switch (family) {
    case DeviceFamily::kAdreno:
    case DeviceFamily::kMali:
    case DeviceFamily::kIntelGpu:
    case DeviceFamily::kNvidiaGpu:
    case DeviceFamily::kAmdGpu:
    case DeviceFamily::kAppleGpu:
    case DeviceFamily::kPowerVr:
    case DeviceFamily::kOtherGpu:
      return true;
    case DeviceFamily::kUnknown:
    case DeviceFamily::kPoclCpu:
    case DeviceFamily::kOtherCpu:
      return false;
  }
  return false;
}

std::string DeviceFacts::SelectionKey() const {
  return absl::StrCat(
      "kernels=", KernelFamilyName(kernel_family), " max_wg=", max_work_group_size,
      " cu=", compute_units, " local=", local_mem_bytes, local_mem_is_global ? "/global" : "",
      " vendor=", DeviceVendorName(vendor), " family=", DeviceFamilyName(family),
      " adreno=", adreno.generation, "/", adreno.model,
      " mali=", mali.series != 0 ? std::string(1, mali.series) : "", mali.model, "/",
      MaliArchitectureName(mali.architecture), " intel=", IntelGpuArchitectureName(intel),
      " cl=", opencl_major, ".", opencl_minor, " subgroups=", absl::StrJoin(subgroup_sizes, "/"),
      subgroup_functions ? "+functions" : "", " fp16=", fp16 ? 1 : 0,
      " dot8=", IntDotProductName(int8_dot_product), " images=", images ? 1 : 0, "/",
      image2d_max_width, "x", image2d_max_height, "/", image_buffer_max_pixels,
      " max_alloc=", max_alloc_bytes,
      // Only where set, so that the keys of other devices
      // (engine files, tuning caches) stay as they were.
      nvidia_compute_capability != 0 ? absl::StrCat(" sm=", nvidia_compute_capability) : "",
      // CPU tiles follow the vector width (CpuAccumulatorLanes); GPU keys
      // leave it out.
      CpuKernels() && native_float_lanes != 0 ? absl::StrCat(" lanes=", native_float_lanes) : "",
      matrix_units_emulated ? " mma=emulated" : "");
}

std::string DeviceFacts::Describe() const {
  std::string text;
  switch (family) {
    case DeviceFamily::kAdreno:
      text = adreno.generation != 0
                 ? absl::StrCat("Adreno ", adreno.generation, "xx (Adreno ", adreno.model, ")")
                 : "Adreno (model unknown)";
      break;
    case DeviceFamily::kMali:
      text = mali.model != 0 ? absl::StrCat("Mali-", std::string(1, mali.series), mali.model, " (",
                                            MaliArchitectureName(mali.architecture), ")")
                             : "Mali (model unknown)";
      break;
    case DeviceFamily::kIntelGpu:
      text = absl::StrCat("Intel GPU (", IntelGpuArchitectureName(intel), ")");
      break;
    default:
      text = DeviceFamilyName(family);
      break;
  }
  absl::StrAppend(
      &text, ", vendor ", DeviceVendorName(vendor), ", ", KernelFamilyName(kernel_family),
      " kernels, ", local_mem_bytes / 1024, " KiB local memory",
      local_mem_is_global ? " (in global memory)" : "", ", sub-groups ",
      subgroup_sizes.empty() ? "unknown" : absl::StrJoin(subgroup_sizes, "/"),
      subgroup_functions ? " (sub-group functions)" : "", fp16 ? ", fp16" : "",
      int8_dot_product != IntDotProduct::kNone
          ? absl::StrCat(", int8 dot product (", IntDotProductName(int8_dot_product), ")")
          : "",
      images ? absl::StrCat(", images up to ", image2d_max_width, "x", image2d_max_height)
             : ", no images",
      native_float_lanes != 0 ? absl::StrCat(", ", native_float_lanes, "-lane float vectors") : "",
      nvidia_compute_capability != 0
          ? absl::StrCat(", compute capability ", nvidia_compute_capability / 10, ".",
                         nvidia_compute_capability % 10,
                         Tf32MatrixInstructions() ? " (tf32 matrix instructions)" : "")
          : "");
  return text;
}

const char* KernelFamilyName(KernelFamily family) {
  return family == KernelFamily::kGpu ? "gpu" : "cpu";
}

const char* DeviceVendorName(DeviceVendor vendor) {
  switch (vendor) {
    case DeviceVendor::kQualcomm:
      return "qualcomm";
    case DeviceVendor::kArm:
      return "arm";
    case DeviceVendor::kIntel:
      return "intel";
    case DeviceVendor::kNvidia:
      return "nvidia";
    case DeviceVendor::kAmd:
      return "amd";
    case DeviceVendor::kApple:
      return "apple";
    case DeviceVendor::kImagination:
      return "imagination";
    case DeviceVendor::kUnknown:
      break;
  }
  return "unknown";
}

const char* DeviceFamilyName(DeviceFamily family) {
  switch (family) {
    case DeviceFamily::kAdreno:
      return "adreno";
    case DeviceFamily::kMali:
      return "mali";
    case DeviceFamily::kIntelGpu:
      return "intel-gpu";
    case DeviceFamily::kNvidiaGpu:
      return "nvidia-gpu";
    case DeviceFamily::kAmdGpu:
      return "amd-gpu";
    case DeviceFamily::kAppleGpu:
      return "apple-gpu";
    case DeviceFamily::kPowerVr:
      return "powervr";
    case DeviceFamily::kOtherGpu:
      return "other-gpu";
    case DeviceFamily::kPoclCpu:
      return "pocl-cpu";
    case DeviceFamily::kOtherCpu:
      return "other-cpu";
    case DeviceFamily::kUnknown:
      break;
  }
  return "unknown";
}

const char* MaliArchitectureName(MaliArchitecture architecture) {
  switch (architecture) {
    case MaliArchitecture::kMidgard:
      return "midgard";
    case MaliArchitecture::kBifrost:
      return "bifrost";
    case MaliArchitecture::kValhall:
      return "valhall";
    case MaliArchitecture::kFifthGen:
      return "5th-gen";
    case MaliArchitecture::kUnknown:
      break;
  }
  return "unknown";
}

const char* IntelGpuArchitectureName(IntelGpuArchitecture architecture) {
  switch (architecture) {
    case IntelGpuArchitecture::kGen:
      return "gen";
    case IntelGpuArchitecture::kXe:
      return "xe";
    case IntelGpuArchitecture::kUnknown:
      break;
  }
  return "unknown";
}

const char* IntDotProductName(IntDotProduct dot) {
  switch (dot) {
    case IntDotProduct::kKhr:
      return "khr";
    case IntDotProduct::kArm:
      return "arm";
    case IntDotProduct::kQcom:
      return "qcom";
    case IntDotProduct::kNone:
      break;
  }
  return "none";
}

}  // namespace recq
