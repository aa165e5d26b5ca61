// Seeded inputs for the commands that run a model without input files.
#ifndef RECQ_TOOLS_RANDOM_INPUT_H_
#define RECQ_TOOLS_RANDOM_INPUT_H_

#include <cstdint>
#include <random>
#include <vector>

#include "recq/tensor.h"

namespace recq::tools {

// RandomInput draws values for an input no file gives: floats in [-1, 1),
// integers in [0, 10) (valid indices for small vocabularies), bools at
// random; as raw bytes of the input's element type.
std::vector<uint8_t> RandomInput(const TensorDesc& desc, std::mt19937& rng);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_RANDOM_INPUT_H_
