// The status macros are public: recq/status_macros.h. This forwarding header
// keeps code written against the old path building; include the public one.
#ifndef RECQ_ENGINE_STATUS_MACROS_H_
#define RECQ_ENGINE_STATUS_MACROS_H_

#include "recq/status_macros.h"

#endif  // RECQ_ENGINE_STATUS_MACROS_H_
