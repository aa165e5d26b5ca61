// recq: record an ML graph's OpenCL dispatches once, replay them many times
// with per-run memory. Include this header for the whole public API.
#ifndef RECQ_RECQ_H_
#define RECQ_RECQ_H_

#include "recq/bindings.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/engine_file.h"
#include "recq/graph.h"
#include "recq/preprocess.h"
#include "recq/recording.h"
#include "recq/tensor.h"

#endif  // RECQ_RECQ_H_
