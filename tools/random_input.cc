#include "tools/random_input.h"

#include <cmath>

namespace recq::tools {

std::vector<uint8_t> RandomInput(const TensorDesc& desc, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(desc.NumElements());
  for (double& v : values) {
    v = dist(rng);
    if (IsIntegral(desc.dtype)) v = std::floor((v + 1.0) * 5.0);
    if (desc.dtype == DataType::kBool) v = v >= 5.0;
  }
  const HostData data = HostData::FromDoubles(desc.dtype, values);
  const auto* p = static_cast<const uint8_t*>(data.bytes());
  return std::vector<uint8_t>(p, p + data.byte_size());
}

}  // namespace recq::tools
