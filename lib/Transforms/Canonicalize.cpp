//===- Canonicalize.cpp - The canonicalization pipeline as one pass -------===//
//
// Runs remove-identity, fuse-quantized-conv, fuse-quantized-lookup,
// fuse-quantized-binary,
// sum-to-add, constant-fold, inline-if, fold-batchnorm, fuse-gelu,
// fuse-hardswish, fold-conv-input-affine, fold-matmul-scale,
// fold-one-hot-matmul, fuse-layernorm, fold-transposes, cse and dce once,
// in that order, each configured with the pipeline's options. Quantized
// convs and elementwise ops fuse before folding turns their weights'
// dequantization into f32 constants; forwarding identities and spelling
// two-operand Sums as Adds exposes constants and Conv ->
// BatchNormalization pairs, folding exposes the constant operands of the
// fused spellings and equal nodes, and DCE removes what the others left
// unused. The activations are fused before fold-conv-input-affine, which
// would otherwise fold their last scaling (GELU's 0.5, a hard-swish's 1/6
// written as a Mul) into the conv after them and leave the spelling
// unmatched: four elementwise ops instead of one activation.
//
//===----------------------------------------------------------------------===//

#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

using namespace strider;

namespace {
class CanonicalizePass final : public Pass {
public:
  llvm::StringRef getArgument() const override { return "canonicalize"; }
  void configure(const PipelineOptions &Opts) override { Options = Opts; }
  llvm::Error run(Graph &G) override;

private:
  llvm::Optional<PipelineOptions> Options;
};

llvm::Error CanonicalizePass::run(Graph &G) {
  std::unique_ptr<Pass> Steps[] = {
      createIdentityRemovalPass(),
      createFuseQuantizedConvPass(),
      createFuseQuantizedLookupPass(),
      createFuseQuantizedBinaryPass(),
      createSumToAddPass(),
      createConstantFoldingPass(),
      createInlineIfPass(),
      createFoldBatchNormPass(),
      createFuseGeluPass(),
      createFuseHardSwishPass(),
      createFoldConvInputAffinePass(),
      createFoldMatMulScalePass(),
      createFoldOneHotMatMulPass(),
      createFuseLayerNormPass(),
      createTransposeFoldingPass(),
      createCommonSubexpressionEliminationPass(),
      createDeadCodeEliminationPass(),
  };
  for (std::unique_ptr<Pass> &P : Steps) {
    if (Options)
      P->configure(*Options);
    if (llvm::Error E = P->run(G))
      return E;
  }
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createCanonicalizePass() {
  return std::make_unique<CanonicalizePass>();
}
