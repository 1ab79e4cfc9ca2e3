//===- ModelImporter.h - The ONNX importer's graph builder ------*- C++ -*-===//
//
// Private to lib/Import/ONNX. The class that builds one Graph from one
// ModelProto: Importer.cpp reads the model, its values and nodes;
// ImportSubgraphs.cpp imports If branches and inlines function bodies.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IMPORT_ONNX_MODELIMPORTER_H
#define STRIDER_LIB_IMPORT_ONNX_MODELIMPORTER_H

#include "OpsetUpgrade.h"
#include "TensorProto.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/Import/ONNX.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strider {
namespace onnximport {

/// "ai.onnx" and "" both name the default domain; the IR uses "".
std::string normalizeDomain(llvm::StringRef Domain);
/// decodeTensor's messages name their subject `tensor '<name>'`; say what
/// the tensor is instead (`initializer 'w'`, `attribute 'value'`).
std::string relabelTensorError(llvm::Error E, llvm::StringRef TensorName,
                               llvm::StringRef Subject);

/// Builds one Graph from one ModelProto; consumes the initializers' data.
class ModelImporter final : public UpgradeBuilder {
public:
  ModelImporter(onnx::ModelProto &Model, llvm::StringRef DisplayName,
                llvm::StringRef ModelDir, const ImportOptions &Opts)
      : Model(Model), File(DisplayName.str()), Opts(Opts) {
    Policy.ModelDir = ModelDir.str();
  }

  llvm::Expected<std::unique_ptr<Graph>> run();

  int64_t getOpsetVersion() const override { return Opset; }
  llvm::Expected<Value *> createHelperNode(const PendingNode &Origin, OpId Id,
                                           llvm::ArrayRef<Value *> Operands,
                                           llvm::ArrayRef<NamedAttribute> Attrs,
                                           llvm::StringRef NameHint) override;

private:
  llvm::Error fileError(const llvm::Twine &Msg) const {
    return makeError(File + ": " + Msg);
  }
  /// A note for the caller (ImportOptions::Warnings); dropped without one.
  void warn(const llvm::Twine &Msg) const {
    if (Opts.Warnings)
      Opts.Warnings->push_back(Msg.str());
  }
  /// \p Type with each unknown dim replaced by a symbol of its own,
  /// `<Input>:<axis>` (unique in the model), so that every dynamic dim of
  /// a graph input can be bound by name.
  TensorType nameAnonymousDims(const TensorType &Type, llvm::StringRef Input);
  std::string describeProtoNode(const onnx::NodeProto &NP) const;

  llvm::Error readModelInfo();
  llvm::Error readInputsAndInitializers();
  llvm::Error collectDeclaredTypes();
  llvm::Error orderNodes(const onnx::GraphProto &GP, std::vector<int> &Order);
  llvm::Error importNode(const onnx::NodeProto &NP);
  /// The value \p Name names in the graph being imported, or in an
  /// enclosing one: then it is captured, becoming an input of each branch
  /// between (and an operand of each If owning one); null if none has it.
  Value *lookupOrCapture(llvm::StringRef Name);
  Value *resolveAt(unsigned Level, llvm::StringRef Name);
  /// An If node: both branches imported as graphs of their own, the outer
  /// values they read passed as operands after the condition.
  llvm::Error importIf(const onnx::NodeProto &NP, PendingNode &PN);
  /// One branch of an If (\p What: the attribute name), with an input for
  /// each of \p Captures first; values it reads from enclosing graphs are
  /// appended to Captures (and become inputs) as they are met.
  llvm::Expected<std::unique_ptr<Graph>>
  importBranch(const onnx::GraphProto &GP, const PendingNode &PN,
               llvm::StringRef What, std::vector<Value *> &Captures);
  /// The body of the function \p F that node \p NP (pending as \p PN)
  /// calls, imported in its place: formal inputs and outputs renamed to
  /// the node's, other values to fresh names, attribute references bound
  /// to the node's attributes (or \p Defaults, a schema's; else left
  /// out), the body's nodes read at \p BodyOpset.
  llvm::Error inlineFunction(
      const onnx::NodeProto &NP, const PendingNode &PN,
      const onnx::FunctionProto &F, int64_t BodyOpset,
      const std::map<std::string, onnx::OpSchema::Attribute> *Defaults);
  /// Expands \p NP, an op of the default domain the IR lacks, through its
  /// ONNX schema's function body (CastLike, Celu, Mish, the losses...):
  /// false when the schema has none.
  llvm::Expected<bool> expandSchemaFunction(const onnx::NodeProto &NP,
                                            const PendingNode &PN);
  /// Infers the type of \p V (imported without shape inference) and of
  /// the values it is computed from, as far as they need, best effort.
  void inferTypeOf(const Value &V, unsigned Depth);
  llvm::Error readOutputs();

  /// Convert a declared type; errors read `<Where>: <What> has ...`.
  llvm::Expected<TensorType> convertType(const onnx::TypeProto &T,
                                         const std::string &Where,
                                         const llvm::Twine &What) const;
  llvm::Expected<Attribute> convertAttribute(const onnx::AttributeProto &A,
                                             const PendingNode &N) const;
  /// Schema check, then (with shape inference on) refine result types so
  /// that later upgrades see ranks.
  llvm::Error finishNode(Node &N);
  std::string makeFreshName(llvm::StringRef Base);

  onnx::ModelProto &Model;
  std::string File;
  ExternalDataPolicy Policy;
  ImportOptions Opts;
  std::unique_ptr<Graph> G;
  /// While a branch is imported into G: the graphs around it, outermost
  /// (the model's) first, and for each the capture list of the branch one
  /// level in (the operands of the If that owns it).
  std::vector<Graph *> EnclosingGraphs;
  std::vector<std::vector<Value *> *> CaptureLists;
  int64_t Opset = 0;
  /// Declared types from value_info and graph outputs.
  llvm::StringMap<const onnx::TypeProto *> DeclaredTypes;
  /// Every value name the model uses, so helper names never clash.
  llvm::StringSet<> ReservedNames;
  /// Model-local functions by (domain, name).
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *>
      LocalFunctions;
  /// Function bodies being inlined, innermost last (a recursion guard).
  unsigned InlineDepth = 0;
  /// Nodes imported from function bodies so far (a guard against calls
  /// that multiply at every level).
  int64_t InlinedNodes = 0;
  /// Nodes a call of model-local function \p F imports (its calls of
  /// other local functions expanded), at most \p Limit + 1; -1 when the
  /// calls nest more than \p Depth deep.
  int64_t getExpandedSize(const onnx::FunctionProto &F, int64_t Limit,
                          unsigned Depth);
  std::map<const onnx::FunctionProto *, int64_t> ExpandedSizes;
};

} // namespace onnximport
} // namespace strider

#endif // STRIDER_LIB_IMPORT_ONNX_MODELIMPORTER_H
