// The registry of recording backends, as the engine looks it up: naming,
// parsing, availability, `auto` selection and creation go through the
// entries that backends/*/ register (engine/recording_backend.h), never
// through a list of backends kept here.
//
// The registry is process-wide and built on first use from the generated
// table; it is immutable afterwards and safe to read from any thread.
#ifndef RECQ_ENGINE_BACKEND_REGISTRY_H_
#define RECQ_ENGINE_BACKEND_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/recording_backend.h"

namespace recq::internal {

// BackendEntries returns every registered backend, ordered by its enum
// value.
const std::vector<BackendEntry>& BackendEntries();

// FindBackend returns the entry of `id`, or null (kAuto, or a value no
// backend registered).
const BackendEntry* FindBackend(Backend id);
// FindBackendByName returns the entry named `name`, or null.
const BackendEntry* FindBackendByName(absl::string_view name);

// A backend picked for a recording, and why.
struct BackendChoice {
  const BackendEntry* entry = nullptr;
  std::string reason;  // Recording::backend_reason()
};

// ChooseBackend resolves `requested` on `context`'s device: for kAuto the
// available, auto-eligible entry of the highest auto priority (the reason
// names it and says why each entry of a higher priority was passed over);
// otherwise that entry, or Unavailable ("backend 'qcom' is unavailable:
// ...") when its probe fails, InvalidArgument when no backend registered
// it.
[[nodiscard]] absl::StatusOr<BackendChoice> ChooseBackend(const Context& context,
                                                          Backend requested);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_BACKEND_REGISTRY_H_
