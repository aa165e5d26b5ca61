// The small network several engine tests compile: conv3x3 + bias, ReLU, +
// input (residual), 1x1 conv, over x [1, 8, 10, 12] to y [1, 4, 10, 12]:
// several programs, dispatches, internal buffers and constants.
#ifndef RECQ_TESTS_TESTING_SMALL_NET_H_
#define RECQ_TESTS_TESTING_SMALL_NET_H_

#include "recq/recq.h"

namespace recq::testing {

Graph SmallNet();

}  // namespace recq::testing

#endif  // RECQ_TESTS_TESTING_SMALL_NET_H_
