//===- PipelineAtSizes.cpp - Optimize a symbolic graph at given sizes -----===//
//
// A graph compiled for a range of input shapes keeps its symbolic dims, and
// layout assignment on it costs what shape inference cannot size (the
// spatial dims after the first strided conv) as 1. Here a copy specialized
// to representative sizes is optimized first, and its layout choices are
// kept for the symbolic graph.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Transforms/Pass.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Specialize.h"

using namespace strider;

static llvm::Error runPipeline(Graph &G, llvm::StringRef Pipeline,
                               const PipelineOptions &Opts, bool VerifyEach) {
  PassManager PM;
  if (llvm::Error E = parsePassPipeline(Pipeline, PM))
    return E;
  PM.configure(Opts);
  PM.setVerifyEach(VerifyEach);
  if (llvm::Error E = PM.run(G))
    return E;
  if (VerifyEach)
    return llvm::Error::success();
  if (llvm::Error E = verifyGraph(G))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "graph fails verification after '" +
                                       Pipeline +
                                       "': " + llvm::toString(std::move(E)));
  return llvm::Error::success();
}

llvm::Error strider::runPipelineAtSizes(Graph &G, const ShapeBindings &Sizes,
                                        llvm::StringRef Pipeline,
                                        const PipelineOptions &Opts,
                                        bool VerifyEach) {
  std::unique_ptr<Graph> Copy = G.clone();
  if (llvm::Error E = specializeShapes(*Copy, Sizes))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "specializing to the representative sizes: " +
            llvm::toString(std::move(E)));
  std::vector<layout::LayoutReport> CopyReports;
  PipelineOptions AtSizes = Opts;
  AtSizes.LayoutReports =
      Opts.LayoutReports ? Opts.LayoutReports : &CopyReports;
  AtSizes.Layout.RecordLabels = true;
  AtSizes.Layout.Keep = nullptr;
  const size_t Before = AtSizes.LayoutReports->size();
  if (llvm::Error E = runPipeline(*Copy, Pipeline, AtSizes, VerifyEach))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "at the representative sizes: " +
                                       llvm::toString(std::move(E)));
  if (AtSizes.LayoutReports->size() == Before)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "pipeline '" + Pipeline +
                                       "' assigns no layouts");
  PipelineOptions Symbolic = Opts;
  // What tuning measures it measured on the copy (the table keeps it).
  Symbolic.Layout.Tune = nullptr;
  Symbolic.Layout.Keep = std::make_shared<const std::map<std::string, uint8_t>>(
      std::move(AtSizes.LayoutReports->back().NodeLabels));
  AtSizes.LayoutReports->back().NodeLabels.clear();
  return runPipeline(G, Pipeline, Symbolic, VerifyEach);
}
