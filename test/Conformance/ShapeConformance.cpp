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
#include "strider/Transforms/Specialize.h"

#include "ConformanceSupport.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace strider;
using namespace strider::conformance;
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

Outcome runTest(llvm::StringRef Dir) {
  llvm::SmallString<256> ModelPath(Dir);
  llvm::sys::path::append(ModelPath, "model.onnx");
  onnx::ModelProto M;
  if (llvm::Error E = readModel(Dir, M))
    return {Status::Failed, llvm::toString(std::move(E))};
  std::string Why = unsupportedReason(M);
  if (!Why.empty())
    return {Status::Unsupported, Why};

  ImportOptions Opts;
  Opts.InferShapes = false;
  auto GOrErr = importONNXFile(ModelPath, Opts);
  if (!GOrErr)
    return {Status::Failed, llvm::toString(GOrErr.takeError())};
  Graph &G = **GOrErr;
  // An op expanded through its ONNX function may leave ops the IR lacks
  // (Bernoulli's RandomUniformLike), whose shapes nothing infers.
  for (const Node *N : G.nodes())
    if (N->isOpaque())
      return {Status::Unsupported, "op " + N->getOpType().str()};
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
  // Shapes computed from the bound inputs' values (a Range whose limit is
  // a cast of an input) need those values folded: inference and constant
  // folding run to their fixed point, as strider-compile's specialization
  // does.
  if (llvm::Error E = inferAndFoldToFixedPoint(G, nullptr).takeError())
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
                                  "'): inferred " + Got.str() + ", expected " +
                                  Want.str()};
  }
  return {Status::Correct, ""};
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Check Strider's shape inference against ONNX backend node tests\n");
  auto DirsOrErr = collectTestDirs(TestRoots);
  if (!DirsOrErr) {
    llvm::errs() << llvm::toString(DirsOrErr.takeError()) << "\n";
    return 1;
  }
  const std::vector<std::string> &Dirs = *DirsOrErr;
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
