// Status propagation macros (absl has none public in the Debian 12 release).
#ifndef RECQ_ENGINE_STATUS_MACROS_H_
#define RECQ_ENGINE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RECQ_CONCAT_INNER_(a, b) a##b
#define RECQ_CONCAT_(a, b) RECQ_CONCAT_INNER_(a, b)

// RECQ_RETURN_IF_ERROR(expr) returns the status of `expr` if it is not OK.
#define RECQ_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::absl::Status recq_status_ = (expr);        \
    if (!recq_status_.ok()) return recq_status_; \
  } while (false)

// RECQ_ASSIGN_OR_RETURN(lhs, expr) assigns the value of a StatusOr `expr` to
// `lhs` (a declaration or an lvalue), or returns its error.
#define RECQ_ASSIGN_OR_RETURN(lhs, expr) \
  RECQ_ASSIGN_OR_RETURN_IMPL_(RECQ_CONCAT_(recq_statusor_, __LINE__), lhs, expr)
#define RECQ_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()

#endif  // RECQ_ENGINE_STATUS_MACROS_H_
