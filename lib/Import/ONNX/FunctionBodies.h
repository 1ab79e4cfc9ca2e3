//===- FunctionBodies.h - Strider's bodies for ONNX ops -----------*- C++ -*-===//
//
// Private to lib/Import/ONNX. Ops of the default domain that the IR lacks
// and that ONNX's schemas (as libonnx ships them) give no function body
// for, written as function bodies over ops the IR has, so that the
// importer inlines them as it inlines schema functions.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IMPORT_ONNX_FUNCTIONBODIES_H
#define STRIDER_LIB_IMPORT_ONNX_FUNCTIONBODIES_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace strider {
namespace onnximport {

/// A body for \p OpType as models importing default-domain opset \p Opset
/// write it, and the opset its own nodes are read at; null when there is
/// none.
struct FunctionBody {
  const onnx::FunctionProto *Body = nullptr;
  int64_t BodyOpset = 0;
};
/// \p Call is the calling node: some forms depend on which attributes it
/// gives.
FunctionBody getStriderFunctionBody(const onnx::NodeProto &Call, int64_t Opset);
/// Whether some call of \p OpType at \p Opset has a body.
bool hasStriderFunctionBody(llvm::StringRef OpType, int64_t Opset);

} // namespace onnximport
} // namespace strider

#endif // STRIDER_LIB_IMPORT_ONNX_FUNCTIONBODIES_H
