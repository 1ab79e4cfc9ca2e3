//===- Activation.h - Fused activations in the CPU backend ------*- C++ -*-===//
//
// Private to lib/CodeGen/CPU: the shared definitions
// (strider/CodeGen/Activation.h) under the names the CPU kernels use.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CPU_ACTIVATION_H
#define STRIDER_LIB_CODEGEN_CPU_ACTIVATION_H

#include "strider/CodeGen/Activation.h"

namespace strider {
namespace cpu {
using codegen::Activation;
using codegen::ActKind;
using codegen::applyScalar;
using codegen::GeluTanhScale;
} // namespace cpu
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CPU_ACTIVATION_H
