//===- ShapeConformance.cpp - Shape inference vs ONNX backend tests -------===//
//
// For every ONNX backend test directory (model.onnx + test_data_set_*/)
// whose ops are all in Strider's op table: import the model, forget every
// declared intermediate and output type, bind shape-like inputs (shapes, axes,
// scales) to their test data as constants, run Strider's shape inference,
// and compare each inferred output type with the stored expected output.
// Prints imported / shape-correct / skipped counts; exits 1 on any failure.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace strider;
namespace cl = llvm::cl;

static cl::list<std::string> TestRoots(cl::Positional, cl::OneOrMore,
                                       cl::desc("<backend test data dirs>"));
static cl::opt<bool> Verbose("v", cl::desc("Print every test's status"));

namespace {
enum class Status { Correct, Unsupported, Failed };

struct Outcome {
  Status S;
  std::string Why;
};

/// Why the model cannot be handled by design (not a bug), or "" if it can.
std::string unsupportedReason(const onnx::ModelProto &M) {
  // Strider imports opsets 7 and newer.
  for (const onnx::OperatorSetIdProto &O : M.opset_import())
    if ((O.domain().empty() || O.domain() == "ai.onnx") && O.version() < 7)
      return "opset " + std::to_string(O.version()) + " < 7";
  for (const onnx::NodeProto &N : M.graph().node()) {
    if (!(N.domain().empty() || N.domain() == "ai.onnx") ||
        !lookupOp(N.op_type()) || N.op_type() == "relayout")
      return "op " + N.op_type();
    for (const onnx::AttributeProto &A : N.attribute()) {
      if (A.has_g() || A.graphs_size() > 0 || A.has_sparse_tensor())
        return "subgraph or sparse attribute";
      // A Resize-11 mode that later opsets removed; the IR has newest forms.
      if (A.s() == "tf_half_pixel_for_nn")
        return "Resize mode tf_half_pixel_for_nn";
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

std::vector<std::string> sortedDataSets(llvm::StringRef Dir) {
  std::vector<std::string> Sets;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::filename(It->path()).startswith("test_data_set_"))
      Sets.push_back(It->path());
  std::sort(Sets.begin(), Sets.end());
  return Sets;
}

/// Whether an input's values may decide shapes: integer inputs (shapes,
/// axes, pads, indices) and inputs never read as a node's first operand
/// (Resize scales and roi, Clip bounds, ...). Data inputs stay inputs.
bool isShapeLikeInput(const Value &In) {
  if (isInteger(In.getType().getElementType()))
    return true;
  for (const Use &U : In.getUses())
    if (U.OperandIndex == 0)
      return false;
  return true;
}

/// Replace shape-like graph inputs by Constant nodes holding the data set's
/// values, as a compiler specializing the model for them would.
llvm::Error bindShapeLikeInputs(Graph &G, llvm::StringRef DataSet) {
  std::vector<Value *> Inputs(G.getInputs().begin(), G.getInputs().end());
  for (unsigned K = 0; K < Inputs.size(); ++K) {
    Value *In = Inputs[K];
    if (!isShapeLikeInput(*In))
      continue;
    llvm::SmallString<256> Path(DataSet);
    llvm::sys::path::append(Path, "input_" + std::to_string(K) + ".pb");
    if (!llvm::sys::fs::exists(Path))
      continue;
    auto Data = readONNXTensorFile(Path);
    if (!Data)
      return Data.takeError();
    Node *First = G.getNumNodes() ? *G.nodes().begin() : nullptr;
    std::string Name = In->getName();
    std::string Tmp = G.makeUniqueName(Name + ".bound");
    Node *C = G.createNode(OpId::Constant, {}, {Tmp}, {(*Data)->getType()},
                           First);
    C->setAttr("value", Attribute::getTensor(*Data));
    In->replaceAllUsesWith(C->getResult(0));
    for (unsigned O = 0; O < G.getOutputs().size(); ++O)
      if (G.getOutputs()[O] == In)
        G.setOutput(O, C->getResult(0));
    G.eraseInput(In);
  }
  return llvm::Error::success();
}

Outcome runTest(llvm::StringRef Dir) {
  llvm::SmallString<256> ModelPath(Dir);
  llvm::sys::path::append(ModelPath, "model.onnx");
  auto Buf = llvm::MemoryBuffer::getFile(ModelPath);
  if (!Buf)
    return {Status::Failed, "cannot read model"};
  onnx::ModelProto M;
  if (!M.ParseFromArray((*Buf)->getBufferStart(), (*Buf)->getBufferSize()))
    return {Status::Failed, "protobuf parse failed"};
  std::string Why = unsupportedReason(M);
  if (!Why.empty())
    return {Status::Unsupported, Why};

  ImportOptions Opts;
  Opts.InferShapes = false;
  auto GOrErr = importONNXFile(ModelPath, Opts);
  if (!GOrErr)
    return {Status::Failed, llvm::toString(GOrErr.takeError())};
  Graph &G = **GOrErr;
  std::vector<std::string> Sets = sortedDataSets(Dir);
  if (Sets.empty())
    return {Status::Unsupported, "no data set"};
  if (llvm::Error E = bindShapeLikeInputs(G, Sets.front()))
    return {Status::Failed, llvm::toString(std::move(E))};
  // Forget declared types of everything computed, so that the comparison
  // below checks Strider's inference and nothing the exporter wrote.
  for (Node *N : G.nodes())
    if (N->getOpId() != OpId::Constant)
      for (unsigned I = 0; I < N->getNumResults(); ++I)
        if (Value *R = N->getResult(I))
          R->setType(TensorType());
  if (llvm::Error E = inferShapes(G))
    return {Status::Failed, llvm::toString(std::move(E))};
  if (llvm::Error E = verifyGraph(G))
    return {Status::Failed, llvm::toString(std::move(E))};

  for (unsigned K = 0; K < G.getOutputs().size(); ++K) {
    llvm::SmallString<256> Path(Sets.front());
    llvm::sys::path::append(Path, "output_" + std::to_string(K) + ".pb");
    auto Expected = readONNXTensorFile(Path);
    if (!Expected)
      return {Status::Failed, llvm::toString(Expected.takeError())};
    TensorType Want = (*Expected)->getType();
    const TensorType &Got = G.getOutputs()[K]->getType();
    // ONNX 1.12's test data stores bfloat16 results as UINT16 tensors.
    if (Got.getElementType() == ElementType::BF16 &&
        Want.getElementType() == ElementType::U16)
      Want = Want.withElementType(ElementType::BF16);
    if (Got.withLayout(Layout()) != Want)
      return {Status::Failed, "output " + std::to_string(K) + " ('" +
                                  G.getOutputs()[K]->getName() +
                                  "'): inferred " + Got.str() +
                                  ", expected " + Want.str()};
  }
  return {Status::Correct, ""};
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Check Strider's shape inference against ONNX backend node tests\n");
  std::vector<std::string> Dirs;
  for (const std::string &Root : TestRoots) {
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Root, EC), End; It != End && !EC;
         It.increment(EC)) {
      llvm::SmallString<256> Model(It->path());
      llvm::sys::path::append(Model, "model.onnx");
      if (llvm::sys::fs::exists(Model))
        Dirs.push_back(It->path());
    }
    if (EC) {
      llvm::errs() << Root << ": " << EC.message() << "\n";
      return 1;
    }
  }
  std::sort(Dirs.begin(), Dirs.end());
  unsigned Correct = 0, Unsupported = 0, Failed = 0;
  for (const std::string &Dir : Dirs) {
    Outcome O = runTest(Dir);
    llvm::StringRef Name = llvm::sys::path::filename(Dir);
    switch (O.S) {
    case Status::Correct:
      ++Correct;
      if (Verbose)
        llvm::outs() << "PASS " << Name << "\n";
      break;
    case Status::Unsupported:
      ++Unsupported;
      if (Verbose)
        llvm::outs() << "UNSUPPORTED " << Name << " (" << O.Why << ")\n";
      break;
    case Status::Failed:
      ++Failed;
      llvm::outs() << "FAIL " << Name << ": " << O.Why << "\n";
      break;
    }
  }
  llvm::outs() << "onnx backend tests: " << Dirs.size() << " total, "
               << Correct + Failed << " imported, " << Correct
               << " shape-correct, " << Failed << " failed, " << Unsupported
               << " skipped as unsupported\n";
  return Failed ? 1 : 0;
}
