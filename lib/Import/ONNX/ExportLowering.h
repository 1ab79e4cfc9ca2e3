//===- ExportLowering.h - IR concepts ONNX lacks (internal) -----*- C++ -*-===//
//
// The two lowerings the ONNX exporter needs: physical layouts and relayouts
// become explicit Transpose nodes (LayoutLowering), and the IR's newest-opset
// op forms are rewritten into the forms of the opset the model is written at
// (getMinimumOpset, lowerToOpset). Private to lib/Import/ONNX; the design is
// described at the top of ExportLowering.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IMPORT_ONNX_EXPORTLOWERING_H
#define STRIDER_LIB_IMPORT_ONNX_EXPORTLOWERING_H

#include "strider/IR/TensorData.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace strider {

class Node;
class Value;

namespace onnxexport {

/// The part of the model writer the lowerings append to.
class ExportSink {
public:
  virtual ~ExportSink();
  /// A tensor name not used anywhere in the model, based on \p Base.
  virtual std::string makeUniqueTensorName(llvm::StringRef Base) = 0;
  /// A node name no other node of the model has, based on \p Base (ONNX
  /// Runtime rejects duplicate node names); empty stays empty.
  virtual std::string makeUniqueNodeName(llvm::StringRef Base) = 0;
  /// Append \p NP to the graph's node list.
  virtual void addNode(onnx::NodeProto NP) = 0;
  /// Record the type of an intermediate tensor \p Name for value_info.
  /// \p T must have the identity layout.
  virtual void recordValueInfo(llvm::StringRef Name, const TensorType &T) = 0;
  /// Add \p D (identity layout) as an initializer with a fresh name based
  /// on \p Base; returns the name.
  virtual std::string addInitializer(const TensorData &D,
                                     llvm::StringRef Base) = 0;
};

/// The type of the ONNX tensor that holds a value of type \p T: its dims in
/// physical order, identity layout. \p T must be ranked if it has a
/// non-identity layout.
TensorType getPhysicalType(const TensorType &T);

/// \p D laid out as a dense tensor of the physical shape of layout \p L
/// (identity layout in the result): the bytes an ONNX initializer of a
/// value with layout \p L holds. \p D may itself be in any layout.
llvm::Expected<TensorDataRef> getPhysicalTensor(const TensorData &D,
                                                const Layout &L);

/// Tracks, for every IR value, which ONNX tensors hold it: its physical
/// form (always named like the value) and its logical form, and emits the
/// Transposes that convert between them on demand (at most once each).
class LayoutLowering {
public:
  explicit LayoutLowering(ExportSink &Sink) : Sink(Sink) {}

  /// \p V's ONNX tensor (named like \p V) holds its physical form: graph
  /// inputs, initializers.
  void definePhysical(const Value &V);
  /// \p V's logical form is the existing tensor \p LogicalName (an If
  /// branch's input: a tensor of the enclosing graph); with the identity
  /// layout, \p V must be named so.
  void defineLogical(const Value &V, llvm::StringRef LogicalName);
  /// The tensor name a node computing \p V logically writes it to: the
  /// value's name for the identity layout, a fresh name otherwise.
  std::string defineLogicalResult(const Value &V);
  /// The name of a tensor holding \p V in logical order; emits a Transpose
  /// from its physical form when needed.
  std::string getLogicalName(const Value &V);
  /// The name of the tensor holding \p V's physical form (the value's own
  /// name); emits a Transpose from its logical form when needed.
  std::string getPhysicalName(const Value &V);
  /// Emit a relayout node as a Transpose from its operand's physical form
  /// to its result's (an Identity when both layouts agree).
  void lowerRelayout(const Node &N);

private:
  struct Forms {
    std::string LogicalName; ///< Empty: no logical form yet.
    bool HasPhysical = false;
  };
  ExportSink &Sink;
  llvm::DenseMap<const Value *, Forms> ValueForms;
};

/// The lowest default-domain opset version at which \p N (a table op other
/// than Constant and relayout) can be written.
int64_t getMinimumOpset(const Node &N);

/// Rewrite \p NP, which holds \p N in the IR's (newest) form with one input
/// per operand and one output per result, into the form of opset
/// \p Version >= getMinimumOpset(N). Inputs that become attributes are left
/// as empty names; the caller trims trailing empty inputs and outputs.
void lowerToOpset(const Node &N, int64_t Version, onnx::NodeProto &NP,
                  ExportSink &Sink);

/// The lowest ONNX IR version that can hold default-domain opset
/// \p Opset.
int64_t getMinimumIRVersion(int64_t Opset);

} // namespace onnxexport
} // namespace strider

#endif // STRIDER_LIB_IMPORT_ONNX_EXPORTLOWERING_H
