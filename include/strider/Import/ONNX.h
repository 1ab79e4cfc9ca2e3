//===- ONNX.h - ONNX import and export --------------------------*- C++ -*-===//
//
// ModelProto <-> Graph. The importer accepts every opset from 6 to the
// newest and rewrites older op forms into the IR's (newest-opset) forms;
// the exporter writes a model ONNX Runtime runs with the same results,
// turning relayouts and physical layouts into explicit Transpose nodes.
// No ONNX or protobuf header is exposed here.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IMPORT_ONNX_H
#define STRIDER_IMPORT_ONNX_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace strider {

class Graph;
class TensorData;
using TensorDataRef = std::shared_ptr<const TensorData>;

struct ImportOptions {
  /// Run shape inference after import (errors on inconsistent models).
  bool InferShapes = true;
  /// Refuse what ONNX Runtime tolerates: a negative dim_value in a declared
  /// type (otherwise read as a dynamic dim) and a declared value_info or
  /// output type that contradicts inference (otherwise inference wins).
  bool Strict = false;
  /// Where the importer appends one located note per tolerated problem;
  /// null: they are dropped. (Libraries print nothing.)
  std::vector<std::string> *Warnings = nullptr;
};

/// Whether the importer reads default-domain op \p OpType in a model that
/// imports opset \p Opset: the opset is in the supported range and, below
/// opset 6, the op already has the form it has in opset 6.
bool isImportableOnnxOpForm(llvm::StringRef OpType, int64_t Opset);
/// Whether the importer expands default-domain op \p OpType of opset
/// \p Opset into the body of the function ONNX defines it by (an op the
/// IR lacks: CastLike, Celu, MeanVarianceNormalization, the losses...) or,
/// where libonnx's schema has none, into Strider's own decomposition
/// (ReduceL1, ReduceLogSum, ReduceLogSumExp).
bool isExpandedOnnxFunction(llvm::StringRef OpType, int64_t Opset);

/// Import the model at \p Path. External data is resolved relative to the
/// model's directory; locations escaping it are refused.
llvm::Expected<std::unique_ptr<Graph>>
importONNXFile(llvm::StringRef Path, const ImportOptions &Opts = {});

/// Import a serialized ModelProto. \p DisplayName is used in diagnostics
/// and locations; \p ModelDir is the directory external data is read from
/// (empty: external data is refused).
llvm::Expected<std::unique_ptr<Graph>>
importONNXBytes(llvm::StringRef Bytes, llvm::StringRef DisplayName,
                llvm::StringRef ModelDir, const ImportOptions &Opts = {});

/// Serialize \p G as a ModelProto.
llvm::Expected<std::string> exportONNXBytes(const Graph &G);

/// Write \p G to \p Path atomically (temporary file, then rename).
llvm::Error exportONNXFile(const Graph &G, llvm::StringRef Path);

/// Read a serialized TensorProto file (ONNX's backend-test `input_K.pb` /
/// `output_K.pb`). External data is resolved relative to the file's
/// directory. Returns the tensor and, through \p Name if given, its name.
llvm::Expected<TensorDataRef> readONNXTensorFile(llvm::StringRef Path,
                                                 std::string *Name = nullptr);

} // namespace strider

#endif // STRIDER_IMPORT_ONNX_H
