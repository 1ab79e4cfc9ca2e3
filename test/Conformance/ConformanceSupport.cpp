//===- ConformanceSupport.cpp - Shared pieces of the conformance drivers --===//

#include "ConformanceSupport.h"

#include "strider/IR/Graph.h"
#include "strider/IR/OpInfo.h"
#include "strider/Import/ONNX.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace strider;
using namespace strider::conformance;

llvm::Expected<std::vector<std::string>>
conformance::collectTestDirs(llvm::ArrayRef<std::string> Roots) {
  std::vector<std::string> Dirs;
  for (const std::string &Root : Roots) {
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Root, EC), End; It != End && !EC;
         It.increment(EC)) {
      llvm::SmallString<256> Model(It->path());
      llvm::sys::path::append(Model, "model.onnx");
      if (llvm::sys::fs::exists(Model))
        Dirs.push_back(It->path());
    }
    if (EC)
      return llvm::createStringError(EC, Root + ": " + EC.message());
  }
  std::sort(Dirs.begin(), Dirs.end());
  return Dirs;
}

std::vector<std::string> conformance::sortedDataSets(llvm::StringRef Dir) {
  std::vector<std::string> Sets;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::filename(It->path()).startswith("test_data_set_"))
      Sets.push_back(It->path());
  std::sort(Sets.begin(), Sets.end());
  return Sets;
}

llvm::Error conformance::readModel(llvm::StringRef Dir, onnx::ModelProto &M) {
  llvm::SmallString<256> ModelPath(Dir);
  llvm::sys::path::append(ModelPath, "model.onnx");
  auto Buf = llvm::MemoryBuffer::getFile(ModelPath);
  if (!Buf)
    return llvm::createStringError(Buf.getError(), "cannot read model");
  if (!M.ParseFromArray((*Buf)->getBufferStart(), (*Buf)->getBufferSize()))
    return llvm::createStringError(std::errc::invalid_argument,
                                   "protobuf parse failed");
  return llvm::Error::success();
}

std::string conformance::unsupportedReason(const onnx::ModelProto &M) {
  // Below opset 6 Strider imports only ops whose form opset 6 has.
  int64_t Opset = 0;
  for (const onnx::OperatorSetIdProto &O : M.opset_import())
    if (O.domain().empty() || O.domain() == "ai.onnx")
      Opset = O.version();
  for (const onnx::NodeProto &N : M.graph().node()) {
    if (!(N.domain().empty() || N.domain() == "ai.onnx") ||
        (!lookupOp(N.op_type()) &&
         !isExpandedOnnxFunction(N.op_type(), Opset)) ||
        N.op_type() == "relayout")
      return "op " + N.op_type();
    if (!isImportableOnnxOpForm(N.op_type(), Opset))
      return "op " + N.op_type() + " of opset " + std::to_string(Opset);
    for (const onnx::AttributeProto &A : N.attribute()) {
      // If's branches import (as graph attributes); other subgraphs not.
      if ((A.has_g() && N.op_type() != "If") || A.graphs_size() > 0 ||
          A.has_sparse_tensor())
        return "subgraph or sparse attribute";
    }
  }
  auto TypeOk = [](const onnx::ValueInfoProto &V) {
    return V.type().has_tensor_type() &&
           fromOnnxDataType(V.type().tensor_type().elem_type()).hasValue();
  };
  for (const onnx::ValueInfoProto &V : M.graph().input())
    if (!TypeOk(V))
      return "input type";
  for (const onnx::ValueInfoProto &V : M.graph().output())
    if (!TypeOk(V))
      return "output type";
  for (const onnx::TensorProto &T : M.graph().initializer())
    if (!fromOnnxDataType(T.data_type()))
      return "initializer type";
  return "";
}

std::string conformance::dataFile(llvm::StringRef DataSet, llvm::StringRef Base,
                                  unsigned K) {
  llvm::SmallString<256> Path(DataSet);
  llvm::sys::path::append(Path, Base + "_" + std::to_string(K) + ".pb");
  return std::string(Path);
}

void conformance::replaceInputByConstant(Graph &G, Value *In,
                                         TensorDataRef Data) {
  Node *First = G.getNumNodes() ? *G.nodes().begin() : nullptr;
  std::string Tmp = G.makeUniqueName(In->getName() + ".bound");
  Node *C = G.createNode(OpId::Constant, {}, {Tmp}, {Data->getType()}, First);
  C->setAttr("value", Attribute::getTensor(Data));
  In->replaceAllUsesWith(C->getResult(0));
  for (unsigned O = 0; O < G.getOutputs().size(); ++O)
    if (G.getOutputs()[O] == In)
      G.setOutput(O, C->getResult(0));
  G.eraseInput(In);
}

/// Whether an input's values may decide shapes: integer inputs (shapes,
/// axes, pads, indices), scalars (Range bounds) and inputs never read as a
/// node's first operand (Resize scales and roi, Clip bounds, ...). Data
/// inputs stay inputs.
bool conformance::isShapeLikeInput(const Value &In, bool IntegerFirstOperands) {
  if (IntegerFirstOperands && isInteger(In.getType().getElementType()))
    return true;
  if (In.getType().hasRank() && In.getType().getRank() == 0)
    return true;
  for (const Use &U : In.getUses())
    if (U.OperandIndex == 0)
      return false;
  return true;
}

/// Replace shape-like graph inputs by Constant nodes holding the data set's
/// values, as a compiler specializing the model for them would.
llvm::Error conformance::bindShapeLikeInputs(Graph &G, llvm::StringRef DataSet,
                                             bool IntegerFirstOperands) {
  std::vector<Value *> Inputs(G.getInputs().begin(), G.getInputs().end());
  for (unsigned K = 0; K < Inputs.size(); ++K) {
    Value *In = Inputs[K];
    if (!isShapeLikeInput(*In, IntegerFirstOperands))
      continue;
    std::string Path = dataFile(DataSet, "input", K);
    if (!llvm::sys::fs::exists(Path))
      continue;
    auto Data = readONNXTensorFile(Path);
    if (!Data)
      return Data.takeError();
    replaceInputByConstant(G, In, *Data);
  }
  return llvm::Error::success();
}
