//===- OpsetUpgrade.h - Older ONNX op forms to the IR's --------*- C++ -*-===//
//
// The IR's ops follow the newest ONNX opset. The importer reads each ONNX
// node into a PendingNode and hands it to upgradeNode, which rewrites older
// forms (attributes that later became inputs, Upsample, old Softmax, ...)
// into the newest form, creating helper nodes where needed. Private to
// lib/Import/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IMPORT_ONNX_OPSETUPGRADE_H
#define STRIDER_LIB_IMPORT_ONNX_OPSETUPGRADE_H

#include "strider/IR/Graph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace strider {
namespace onnximport {

/// Oldest and newest default-domain opset versions the importer accepts.
/// Below opset 6 only ops whose form did not change up to opset 6 are read
/// (getOpset6FormVersion).
constexpr int64_t MinSupportedOpset = 1;

/// The opset in which default-domain op \p OpType took the form it has in
/// opset 6 (1 for ops unchanged since opset 1 and for ops unknown here).
/// A model importing an older opset than this uses an earlier form, which
/// the importer does not read.
int64_t getOpset6FormVersion(llvm::StringRef OpType);
constexpr int64_t MaxSupportedOpset = 28;

/// An ONNX node as read from the model, before it becomes an IR node.
struct PendingNode {
  /// Op type and domain ("" for the default domain, "ai.onnx" normalized).
  std::string OpType;
  std::string Domain;
  /// Operands; null for ONNX's empty input names.
  std::vector<Value *> Operands;
  /// One entry per result slot; empty names are missing results.
  std::vector<std::string> ResultNames;
  /// Declared result types (from value_info), one per result slot.
  std::vector<TensorType> ResultTypes;
  std::vector<NamedAttribute> Attrs;
  Location Loc;
  std::string DocString;
  /// `<file>: node '<name>' (<OpType>)`, the prefix of this node's errors.
  std::string Description;

  const Attribute *findAttr(llvm::StringRef Name) const;
  /// Remove attribute \p Name; returns whether it was present.
  bool eraseAttr(llvm::StringRef Name);
  void setAttr(llvm::StringRef Name, Attribute A);
  /// Error located at this node: `<Description>: <Msg>`.
  llvm::Error error(const llvm::Twine &Msg) const;
};

/// What an upgrade may do to the graph under construction; implemented by
/// the importer.
class UpgradeBuilder {
public:
  virtual ~UpgradeBuilder();
  /// Version of the default-domain opset the model imports.
  virtual int64_t getOpsetVersion() const = 0;
  /// Create a table node before the node being upgraded, with one result
  /// named after \p NameHint (made unique), located at \p Origin. The
  /// result type is unknown until shape inference.
  virtual llvm::Expected<Value *> createHelperNode(
      const PendingNode &Origin, OpId Id, llvm::ArrayRef<Value *> Operands,
      llvm::ArrayRef<NamedAttribute> Attrs, llvm::StringRef NameHint) = 0;

  /// A Constant helper node holding \p Data.
  llvm::Expected<Value *> createConstant(const PendingNode &Origin,
                                         TensorDataRef Data,
                                         llvm::StringRef NameHint);
};

/// Rewrite \p N (read at the builder's opset version) into the IR's form.
/// Default-domain nodes only; other domains are left alone.
llvm::Error upgradeNode(UpgradeBuilder &B, PendingNode &N);

} // namespace onnximport
} // namespace strider

#endif // STRIDER_LIB_IMPORT_ONNX_OPSETUPGRADE_H
