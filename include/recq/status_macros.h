// Status propagation macros for code that calls recq: built-in ops and
// backends use them, and so may an application's custom ops (recq/op_registry.h).
// (absl has none public in the Debian 12 release.)
//
//   absl::StatusOr<Engine> Build(const Context& context) {
//     RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx("model.onnx"));
//     RECQ_RETURN_IF_ERROR(ApplyPrePostProcessing(graph, ppp));
//     return Engine::Compile(context, graph);
//   }
//   RECQ_CHECK_OK(RegisterOp(std::move(def)));  // at start-up: abort on failure
#ifndef RECQ_STATUS_MACROS_H_
#define RECQ_STATUS_MACROS_H_

#include <cstdio>
#include <cstdlib>
#include <utility>

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

// RECQ_CHECK_OK(expr) aborts the process, printing the status and where, if
// the absl::Status `expr` is not OK. For start-up steps that cannot fail in
// a correct program (registering an application's ops); everything that can
// fail at run time returns its status instead.
#define RECQ_CHECK_OK(expr)                                                                    \
  do {                                                                                         \
    const ::absl::Status recq_check_status_ = (expr);                                          \
    if (!recq_check_status_.ok()) {                                                            \
      std::fprintf(stderr, "%s:%d: RECQ_CHECK_OK(%s) failed: %s\n", __FILE__, __LINE__, #expr, \
                   recq_check_status_.ToString().c_str());                                     \
      std::abort();                                                                            \
    }                                                                                          \
  } while (false)

#endif  // RECQ_STATUS_MACROS_H_
