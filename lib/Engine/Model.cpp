//===- Model.cpp - Loading a model for sessions ---------------------------===//
//
// Reads an ONNX file, textual IR, or a strider-compile output directory
// into the graph every session of the model starts from.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/Engine/Artifact.h"
#include "strider/Engine/Session.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Support/FileIO.h"
#include "strider/Transforms/Pass.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/Specialize.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace strider;
using namespace strider::engine;

Model::~Model() = default;

llvm::Expected<std::shared_ptr<const Model>>
Model::load(llvm::StringRef Path, const LoadOptions &Opts) {
  std::shared_ptr<Model> M(new Model());
  M->File = Path.str();
  if (llvm::sys::fs::is_directory(Path)) {
    llvm::SmallString<256> Art(Path), Lir(Path), Onnx(Path);
    llvm::sys::path::append(Art, "model.strider");
    llvm::sys::path::append(Lir, "model.lir");
    llvm::sys::path::append(Onnx, "model.onnx");
    M->File = (llvm::sys::fs::exists(Art)   ? Art
               : llvm::sys::fs::exists(Lir) ? Lir
                                            : Onnx)
                  .str()
                  .str();
  }
  if (llvm::StringRef(M->File).endswith(".strider")) {
    auto A = readArtifact(M->File, cpu::getDerivedFormat());
    if (!A)
      return A.takeError();
    M->G = std::move(A->G);
    M->Derived = std::move(A->Derived);
    M->Ranges = std::move(A->Ranges);
    M->FromArtifact = true;
  } else if (!llvm::StringRef(M->File).endswith(".lir")) {
    ImportOptions IO;
    IO.Strict = Opts.Strict;
    IO.Warnings = &M->Warnings;
    auto G = importONNXFile(M->File, IO);
    if (!G)
      return G.takeError();
    M->G = std::move(*G);
    M->FromOnnx = true;
  } else {
    // model.lir's large constants view its mapped model.lir.weights.
    auto G = readGraphFile(M->File);
    if (!G)
      return G.takeError();
    if (llvm::Error E = verifyGraph(**G))
      return E;
    M->G = std::move(*G);
  }
  if (!M->FromOnnx) {
    // Locations of a compiled graph keep the ONNX file it was compiled
    // from; errors name the file this model was read from.
    for (Node *N : M->G->nodes())
      N->setLoc(Location{M->File, N->getLoc().Name});
    M->G->setSourceFile(M->File);
  }
  for (const Value *In : M->G->getInputs())
    if (!In->getDefaultData())
      M->Inputs.push_back(In);
  for (const Value *Out : M->G->getOutputs())
    M->Outputs.push_back(Out);
  M->ControlInputs = findControlInputs(*M->G);
  if (!M->Derived)
    M->Derived = std::make_shared<cpu::SharedDerivedStore>();
  return std::shared_ptr<const Model>(std::move(M));
}

const Graph &Model::getPreparedGraph() const {
  if (!FromOnnx)
    return *G;
  std::call_once(PrepareOnce, [this] {
    std::unique_ptr<Graph> P = G->clone();
    PassManager PM;
    llvm::cantFail(parsePassPipeline(getPreparePipeline(), PM));
    // A refusal here is the session pipeline's to report, in the context
    // of the shapes it specializes to.
    if (llvm::Error E = PM.run(*P))
      llvm::consumeError(std::move(E));
    else
      Prepared = std::move(P);
  });
  return Prepared ? *Prepared : *G;
}

llvm::Error engine::checkShapesInRanges(
    llvm::ArrayRef<InputRange> Ranges,
    const std::map<std::string, std::vector<int64_t>> &Shapes,
    const llvm::Twine &Where, llvm::StringRef Source) {
  for (const InputRange &R : Ranges) {
    auto Fed = Shapes.find(R.Input);
    if (Fed == Shapes.end() || R.Axis >= Fed->second.size())
      continue; // Specialization names a missing input or a wrong rank.
    const int64_t Size = Fed->second[R.Axis];
    if (Size < R.Min || Size > R.Max)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          Where + ": input '" + R.Input + "' dim " + llvm::Twine(R.Axis) +
              " is " + llvm::Twine(Size) + ", outside the range " +
              llvm::Twine(R.Min) + ".." + llvm::Twine(R.Max) + " " + Source);
  }
  return llvm::Error::success();
}

llvm::Error Model::checkInputRanges(
    const std::map<std::string, std::vector<int64_t>> &Shapes) const {
  return checkShapesInRanges(
      Ranges, Shapes, File,
      "the model was compiled for (strider-compile --shape)");
}
