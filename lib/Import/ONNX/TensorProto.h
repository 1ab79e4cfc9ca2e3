//===- TensorProto.h - TensorProto <-> TensorData (internal) ----*- C++ -*-===//
//
// Conversion between ONNX TensorProto and strider::TensorData, shared by the
// importer and the exporter. Private to lib/Import/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IMPORT_ONNX_TENSORPROTO_H
#define STRIDER_LIB_IMPORT_ONNX_TENSORPROTO_H

#include "strider/IR/TensorData.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace strider {
namespace onnximport {

/// Where external data may be read from: files under \p ModelDir only.
struct ExternalDataPolicy {
  /// Directory of the model file; empty refuses all external data.
  std::string ModelDir;
};

/// Decode a TensorProto in any storage form (raw_data, typed fields
/// including fp16/bf16 in int32_data, external data) into TensorData with
/// the identity layout. Errors (unsupported type, size mismatch, escaping
/// or out-of-range external data) say what is wrong; callers add the
/// location prefix.
llvm::Expected<TensorDataRef> decodeTensor(const onnx::TensorProto &T,
                                           const ExternalDataPolicy &Policy);

/// Encode \p D as a TensorProto with raw_data, named \p Name. Data in a
/// non-identity physical layout is written in logical (ONNX) order.
void encodeTensor(const TensorData &D, llvm::StringRef Name,
                  onnx::TensorProto &Out);

/// Return the bytes of \p D in logical (identity-layout) order.
std::vector<uint8_t> toLogicalOrder(const TensorData &D);

/// Name of an ONNX TensorProto::DataType for diagnostics (`string`,
/// `float8e4m3fn`, ..., or `data type N`), including types the IR lacks.
std::string describeOnnxDataType(int32_t DataType);

} // namespace onnximport
} // namespace strider

#endif // STRIDER_LIB_IMPORT_ONNX_TENSORPROTO_H
