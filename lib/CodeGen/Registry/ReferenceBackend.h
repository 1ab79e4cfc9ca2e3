//===- ReferenceBackend.h - The registry's own entries ----------*- C++ -*-===//
//
// The backend the registry defines itself rather than a backend library:
// the reference interpreter (the placeholders of backends a build leaves
// out are BackendRegistry.cpp's own).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_REGISTRY_REFERENCEBACKEND_H
#define STRIDER_LIB_CODEGEN_REGISTRY_REFERENCEBACKEND_H

#include "strider/CodeGen/Backend.h"

namespace strider {
namespace codegen {

/// "reference": runtime::runReference on the graph.
const Backend &getReferenceBackend();

} // namespace codegen
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_REGISTRY_REFERENCEBACKEND_H
