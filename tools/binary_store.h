// Program binaries stored after a one-shot command has exited. On PoCL a
// program's first binary query compiles a generic work-group function for
// every kernel (seconds when cold); `recq run` hands those programs to a
// background `recq store-binaries` process and exits after its result.
#ifndef RECQ_TOOLS_BINARY_STORE_H_
#define RECQ_TOOLS_BINARY_STORE_H_

#include <string>

#include "absl/status/status.h"
#include "recq/context.h"

namespace recq::tools {

// StoreBinariesAfterExit stores the binaries of the programs `context` built
// from source, as Context::FlushBinaryCache would, without making the
// process wait for them where that is slow: it writes a hand-off file under
// the cache directory and starts `recq store-binaries` on it, detached and
// at the lowest CPU priority, with `device` as its --device. Where storing is
// cheap it stores them now. Failing only means a colder next start: it logs
// a warning and never fails the command.
void StoreBinariesAfterExit(const Context& context, const std::string& device);

// StoreBinariesCommand is `recq store-binaries FILE`: stores the binaries of
// a hand-off file's programs (Context::StoreHandedOffBinaries) in the cache
// of $RECQ_CACHE_DIR (or the default) for `device`, then removes the file.
[[nodiscard]] absl::Status StoreBinariesCommand(const std::string& path, const std::string& device);

// EnableBuildHelpers is called by the recq executable, whose own path a
// helper runs as: without it (a test linking the commands) UseBuildHelpers
// does nothing.
void EnableBuildHelpers();

// UseBuildHelpers lets `context`'s compiles hand programs to build helpers
// (Context::SetBuildHelper): `recq build-helper PLAN` processes for
// `device`, whose standard output tells when their programs are built.
// $RECQ_BUILD_HELPER=off turns them off.
void UseBuildHelpers(const Context& context, const std::string& device);

// BuildHelperCommand is `recq build-helper PLAN`: Context::RunBuildPlan for
// `device`, writing "P" to standard output once the programs are built.
[[nodiscard]] absl::Status BuildHelperCommand(const std::string& path, const std::string& device);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_BINARY_STORE_H_
