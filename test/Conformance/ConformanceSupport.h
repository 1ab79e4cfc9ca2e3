//===- ConformanceSupport.h - Shared pieces of the conformance drivers ----===//
//
// Walking ONNX's backend test directories (model.onnx + test_data_set_*/)
// and deciding which models Strider's importer handles by design. Used by
// strider-shape-conformance and strider-numeric-conformance.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TEST_CONFORMANCE_CONFORMANCESUPPORT_H
#define STRIDER_TEST_CONFORMANCE_CONFORMANCESUPPORT_H

#include "strider/IR/TensorData.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace strider {
class Graph;
class Value;

namespace conformance {

/// The sorted test directories (those holding a model.onnx) under each of
/// \p Roots.
llvm::Expected<std::vector<std::string>>
collectTestDirs(llvm::ArrayRef<std::string> Roots);

/// The sorted test_data_set_* directories of test directory \p Dir.
std::vector<std::string> sortedDataSets(llvm::StringRef Dir);

/// Parses \p Dir/model.onnx into \p M; an error if unreadable.
llvm::Error readModel(llvm::StringRef Dir, onnx::ModelProto &M);

/// Why the model cannot be handled by design (not a bug), or "" if it can:
/// opsets before 7, ops outside the op table, subgraph or sparse
/// attributes, and element types the IR lacks.
std::string unsupportedReason(const onnx::ModelProto &M);

/// \p Dir/<Base>_<K>.pb inside data set directory \p DataSet.
std::string dataFile(llvm::StringRef DataSet, llvm::StringRef Base,
                     unsigned K);

/// Whether graph input \p In may decide shapes: inputs never read as a
/// node's first operand (Resize scales, Reshape shapes, Slice bounds, Pad
/// pads, ...) and, if \p IntegerFirstOperands, every integer input.
bool isShapeLikeInput(const Value &In, bool IntegerFirstOperands = true);

/// Replaces graph input \p In by a Constant node holding \p Data, as a
/// compiler specializing the model for those values would.
void replaceInputByConstant(Graph &G, Value *In, TensorDataRef Data);

/// Replaces every shape-like graph input (the K-th graph input by
/// input_K.pb of \p DataSet) by a Constant node holding its values.
llvm::Error bindShapeLikeInputs(Graph &G, llvm::StringRef DataSet,
                                bool IntegerFirstOperands = true);

} // namespace conformance
} // namespace strider

#endif // STRIDER_TEST_CONFORMANCE_CONFORMANCESUPPORT_H
