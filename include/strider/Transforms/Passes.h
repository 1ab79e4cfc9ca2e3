//===- Passes.h - Pass factories and the registry ---------------*- C++ -*-===//
//
// Every pass has a create<Name>Pass() factory and an entry in Passes.def.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TRANSFORMS_PASSES_H
#define STRIDER_TRANSFORMS_PASSES_H

#include "strider/Transforms/Pass.h"

#include "llvm/ADT/ArrayRef.h"

namespace strider {

#define STRIDER_PASS(Arg, Factory, Desc) std::unique_ptr<Pass> Factory();
#include "strider/Transforms/Passes.def"

/// constant-fold with another bound on the constants a fold may grow (the
/// default, 2^20 elements, keeps ConstantOfShape and Expand of small shapes
/// from becoming large initializers; specialization for a run lifts it).
std::unique_ptr<Pass> createConstantFoldingPass(int64_t MaxGrownElements);

struct PassInfo {
  llvm::StringRef Argument;
  llvm::StringRef Description;
  std::unique_ptr<Pass> (*Create)();
};

/// All registered passes, in Passes.def order.
llvm::ArrayRef<PassInfo> getRegisteredPasses();
/// Registered pass by argument, or null.
const PassInfo *lookupPass(llvm::StringRef Argument);
/// Append the passes of a comma-separated pipeline (`infer-shapes,dce`) to
/// \p PM; unknown names are an error naming them.
llvm::Error parsePassPipeline(llvm::StringRef Pipeline, PassManager &PM);
/// The pipeline an ONNX model is optimized with before it is lowered
/// (strider-compile's, a session's): shape inference, canonicalization,
/// shape inference again, layout assignment.
llvm::StringRef getDefaultPipeline();
/// The part of it that does not depend on the input shapes
/// (canonicalization: batch-norm and affine folding, fusions, folding of
/// constant subgraphs), which a session runs once per model on the
/// unspecialized graph (engine::Model::getPreparedGraph) so that every
/// specialization starts from its result.
llvm::StringRef getPreparePipeline();

struct PipelineOptions;
struct ShapeBindings;

/// Runs \p Pipeline (which ends in layout-assignment) on \p G, whose inputs
/// keep symbolic dims, with the layouts costed at representative sizes:
/// first on a copy of \p G specialized to \p Sizes, whose chosen labels
/// are then kept for the same nodes of \p G (LayoutOptions::Keep; nodes
/// the copy folded away are solved on \p G). Shape inference does not
/// carry a symbolic height through a strided conv (the result's dims are
/// unknown, costed as 1); the copy costs every kernel at its real size.
/// Layout reports go to \p Opts' as usual, the copy's first; tuning
/// (LayoutOptions::Tune) times the copy's convs only. Errors say which
/// graph failed. \p VerifyEach: verify both graphs after every pass
/// (PassManager::setVerifyEach), else once at the end.
llvm::Error runPipelineAtSizes(Graph &G, const ShapeBindings &Sizes,
                               llvm::StringRef Pipeline,
                               const PipelineOptions &Opts,
                               bool VerifyEach = true);

} // namespace strider

#endif // STRIDER_TRANSFORMS_PASSES_H
