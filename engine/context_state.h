// The state behind a recq::Context, shared by engines and recordings.
#ifndef RECQ_ENGINE_CONTEXT_STATE_H_
#define RECQ_ENGINE_CONTEXT_STATE_H_

#include <CL/cl.h>

#include <memory>
#include <mutex>

#include "backends/opencl/cl_handle.h"
#include "engine/binary_cache.h"
#include "engine/program_cache.h"
#include "recq/context.h"

namespace recq::internal {

struct ContextState {
  ContextState(cl::UniqueContext ctx, cl::UniqueQueue q, cl_platform_id p, cl_device_id d,
               DeviceInfo i, std::unique_ptr<BinaryCache> disk)
      : context(std::move(ctx)),
        queue(std::move(q)),
        platform(p),
        device(d),
        info(std::move(i)),
        binary_cache(std::move(disk)),
        programs(context.get(), device, &info, binary_cache.get()) {}

  cl::UniqueContext context;
  cl::UniqueQueue queue;  // the default queue: in-order
  cl_platform_id platform;
  cl_device_id device;
  DeviceInfo info;
  std::unique_ptr<BinaryCache> binary_cache;  // null: no persistent cache
  ProgramCache programs;
  mutable std::mutex helper_mu;
  BuildHelperStarter build_helper;  // guarded by helper_mu; null: none
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_CONTEXT_STATE_H_
