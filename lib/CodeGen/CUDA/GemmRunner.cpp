//===- GemmRunner.cpp - Matrix products through cuBLASLt ------------------===//
//
// GemmRunner on cuBLASLt: the row-major product computed as the
// column-major Y^T = B^T A^T (getLtGemmShape), batched with strides, with
// bias, ReLU and tanh-GELU epilogues fused (splitGemmEpilogue), a constant
// B converted and uploaded at load, and an algorithm from a tuning file
// (its configuration string) or cuBLASLt's heuristic. run() is one
// cublasLtMatmul on the caller's stream.
//
//===----------------------------------------------------------------------===//

#include "LibrariesImpl.h"
#include "LibraryDescriptors.h"

using namespace strider;
using namespace strider::cuda;

#define STRIDER_LT_TRY(Call, What)                                             \
  do {                                                                         \
    cublasStatus_t Status_ = (Call);                                           \
    if (Status_ != CUBLAS_STATUS_SUCCESS)                                      \
      return L.ltError(Status_, What);                                         \
  } while (false)

namespace {

cudaDataType_t getCudaType(DType T) {
  switch (T) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

/// f32 accumulation always; TF32 tensor cores only when asked for (half
/// storage uses tensor cores with f32 accumulation under COMPUTE_32F).
cublasComputeType_t getComputeType(MathMode M) {
  return M == MathMode::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                             : CUBLAS_COMPUTE_32F;
}

class LtGemmRunner final : public GemmRunner {
public:
  LtGemmRunner(Libraries::Impl &L, const GemmDesc &D)
      : L(L), D(D), Shape(getLtGemmShape(D)), Alpha(D.Alpha) {}
  ~LtGemmRunner() override;

  /// Uploads the constant B and the bias.
  llvm::Error upload(const float *ConstantB, const float *Bias);
  /// The operation and the three layouts.
  llvm::Error describe();
  /// Sets the epilogue of \p F (and the bias pointer it reads).
  llvm::Error setEpilogue(const GemmFusion &F);
  /// The heuristic's best algorithm for the current epilogue; false when
  /// cuBLASLt has none.
  llvm::Expected<bool> pickHeuristic();
  /// The algorithm \p C; false when it cannot run the current product.
  llvm::Expected<bool> pickConfig(const GemmAlgoConfig &C);
  /// The chosen algorithm's configuration.
  llvm::Expected<GemmAlgoConfig> readConfig() const;

  size_t getWorkspaceBytes() const override { return Workspace; }
  EpilogueSpec getFused() const override { return Fusion.Fused; }
  std::string getAlgo() const override { return AlgoName; }
  LibraryStatus run(const void *A, const void *B, void *Y, void *Workspace,
                    cudaStream_t S) const override;

  GemmFusion Fusion;
  std::string AlgoName;

private:
  Libraries::Impl &L;
  GemmDesc D;
  LtGemmShape Shape;
  cublasLtMatmulDesc_t Op = nullptr;
  cublasLtMatrixLayout_t ALayout = nullptr, BLayout = nullptr,
                         CLayout = nullptr;
  cublasLtMatmulAlgo_t Algo = {};
  size_t Workspace = 0;
  DeviceBuffer ConstB, BiasData;
  float Alpha = 1.0f, Beta = 0.0f;
};

LtGemmRunner::~LtGemmRunner() {
  for (cublasLtMatrixLayout_t M : {ALayout, BLayout, CLayout})
    if (M)
      (void)L.Lt.cublasLtMatrixLayoutDestroy(M);
  if (Op)
    (void)L.Lt.cublasLtMatmulDescDestroy(Op);
}

llvm::Error LtGemmRunner::upload(const float *ConstantB, const float *Bias) {
  if (ConstantB) {
    // Every batch's B: shared (stride 0) or BatchStrideB apart.
    const int64_t Count = (D.Batch - 1) * D.BatchStrideB + D.K * D.N;
    if (llvm::Error E = ConstB.upload(
            toStorage(llvm::makeArrayRef(ConstantB, size_t(Count)), D.Type),
            "the constant B of a GEMM"))
      return E;
  }
  if (Bias) {
    // cuBLASLt reads the bias in the output's type.
    if (llvm::Error E = BiasData.upload(
            toStorage(llvm::makeArrayRef(Bias, size_t(D.N)), D.Type),
            "a GEMM bias"))
      return E;
  }
  return llvm::Error::success();
}

llvm::Error LtGemmRunner::describe() {
  STRIDER_LT_TRY(
      L.Lt.cublasLtMatmulDescCreate(&Op, getComputeType(D.Math), CUDA_R_32F),
      "cublasLtMatmulDescCreate");
  const int32_t TransA = Shape.TransA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t TransB = Shape.TransB ? CUBLAS_OP_T : CUBLAS_OP_N;
  STRIDER_LT_TRY(L.Lt.cublasLtMatmulDescSetAttribute(
                     Op, CUBLASLT_MATMUL_DESC_TRANSA, &TransA, sizeof(TransA)),
                 "setting the transposition of A");
  STRIDER_LT_TRY(L.Lt.cublasLtMatmulDescSetAttribute(
                     Op, CUBLASLT_MATMUL_DESC_TRANSB, &TransB, sizeof(TransB)),
                 "setting the transposition of B");
  const cudaDataType_t T = getCudaType(D.Type);
  auto Layout = [&](cublasLtMatrixLayout_t &M, int64_t Rows, int64_t Cols,
                    int64_t Ld, int64_t Stride) -> llvm::Error {
    STRIDER_LT_TRY(L.Lt.cublasLtMatrixLayoutCreate(&M, T, uint64_t(Rows),
                                                   uint64_t(Cols), Ld),
                   "cublasLtMatrixLayoutCreate");
    if (Shape.Batch > 1) {
      const int32_t Count = int32_t(Shape.Batch);
      STRIDER_LT_TRY(
          L.Lt.cublasLtMatrixLayoutSetAttribute(
              M, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &Count, sizeof(Count)),
          "setting a batch count");
      STRIDER_LT_TRY(L.Lt.cublasLtMatrixLayoutSetAttribute(
                         M, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                         &Stride, sizeof(Stride)),
                     "setting a batch stride");
    }
    return llvm::Error::success();
  };
  if (llvm::Error E =
          Layout(ALayout, Shape.ARows, Shape.ACols, Shape.Lda, Shape.StrideA))
    return E;
  if (llvm::Error E =
          Layout(BLayout, Shape.BRows, Shape.BCols, Shape.Ldb, Shape.StrideB))
    return E;
  return Layout(CLayout, Shape.CRows, Shape.CCols, Shape.Ldc, Shape.StrideC);
}

llvm::Error LtGemmRunner::setEpilogue(const GemmFusion &F) {
  Fusion = F;
  const uint32_t Epilogue = F.Epilogue;
  STRIDER_LT_TRY(
      L.Lt.cublasLtMatmulDescSetAttribute(Op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                          &Epilogue, sizeof(Epilogue)),
      "setting the epilogue");
  if (F.Fused.Bias) {
    const void *Bias = BiasData.Ptr;
    STRIDER_LT_TRY(
        L.Lt.cublasLtMatmulDescSetAttribute(
            Op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &Bias, sizeof(Bias)),
        "setting the bias");
  }
  return llvm::Error::success();
}

llvm::Expected<bool> LtGemmRunner::pickHeuristic() {
  cublasLtMatmulPreference_t Pref = nullptr;
  STRIDER_LT_TRY(L.Lt.cublasLtMatmulPreferenceCreate(&Pref),
                 "cublasLtMatmulPreferenceCreate");
  const uint64_t Limit = GemmWorkspaceLimit;
  cublasStatus_t Status = L.Lt.cublasLtMatmulPreferenceSetAttribute(
      Pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &Limit, sizeof(Limit));
  cublasLtMatmulHeuristicResult_t Results[8] = {};
  int Got = 0;
  if (Status == CUBLAS_STATUS_SUCCESS)
    Status = L.Lt.cublasLtMatmulAlgoGetHeuristic(L.LtHandle, Op, ALayout,
                                                 BLayout, CLayout, CLayout,
                                                 Pref, 8, Results, &Got);
  (void)L.Lt.cublasLtMatmulPreferenceDestroy(Pref);
  // NOT_SUPPORTED: no algorithm for this configuration (say, epilogue).
  if (Status == CUBLAS_STATUS_NOT_SUPPORTED)
    return false;
  STRIDER_LT_TRY(Status, "cublasLtMatmulAlgoGetHeuristic");
  for (int I = 0; I < Got && I < 8; ++I) {
    if (Results[I].state != CUBLAS_STATUS_SUCCESS)
      continue;
    Algo = Results[I].algo;
    Workspace = Results[I].workspaceSize;
    return true;
  }
  return false;
}

llvm::Expected<bool> LtGemmRunner::pickConfig(const GemmAlgoConfig &C) {
  const cudaDataType_t T = getCudaType(D.Type);
  if (L.Lt.cublasLtMatmulAlgoInit(L.LtHandle, getComputeType(D.Math),
                                  CUDA_R_32F, T, T, T, T, C.Id,
                                  &Algo) != CUBLAS_STATUS_SUCCESS)
    return false;
  auto Set = [&](cublasLtMatmulAlgoConfigAttributes_t A, const auto &V) {
    return L.Lt.cublasLtMatmulAlgoConfigSetAttribute(&Algo, A, &V, sizeof(V)) ==
           CUBLAS_STATUS_SUCCESS;
  };
  if (!Set(CUBLASLT_ALGO_CONFIG_TILE_ID, C.Tile) ||
      !Set(CUBLASLT_ALGO_CONFIG_STAGES_ID, C.Stages) ||
      !Set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, C.SplitK) ||
      !Set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, C.Reduction) ||
      !Set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, C.Swizzle) ||
      !Set(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, C.Custom))
    return false;
  // Newer attributes: only set when not their default, so that a
  // cuBLASLt without them still takes the rest.
  if ((C.InnerShape &&
       !Set(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, C.InnerShape)) ||
      (C.ClusterShape &&
       !Set(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, C.ClusterShape)))
    return false;
  cublasLtMatmulHeuristicResult_t Result = {};
  if (L.Lt.cublasLtMatmulAlgoCheck(L.LtHandle, Op, ALayout, BLayout, CLayout,
                                   CLayout, &Algo,
                                   &Result) != CUBLAS_STATUS_SUCCESS)
    return false;
  Workspace = Result.workspaceSize;
  return true;
}

llvm::Expected<GemmAlgoConfig> LtGemmRunner::readConfig() const {
  GemmAlgoConfig C;
  cublasStatus_t Status = CUBLAS_STATUS_SUCCESS;
  auto Get = [&](cublasLtMatmulAlgoConfigAttributes_t A, auto &V) {
    size_t Written = 0;
    if (Status == CUBLAS_STATUS_SUCCESS)
      Status = L.Lt.cublasLtMatmulAlgoConfigGetAttribute(&Algo, A, &V,
                                                         sizeof(V), &Written);
  };
  Get(CUBLASLT_ALGO_CONFIG_ID, C.Id);
  Get(CUBLASLT_ALGO_CONFIG_TILE_ID, C.Tile);
  Get(CUBLASLT_ALGO_CONFIG_STAGES_ID, C.Stages);
  Get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, C.SplitK);
  Get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, C.Reduction);
  Get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, C.Swizzle);
  Get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, C.Custom);
  STRIDER_LT_TRY(Status, "reading the configuration of a cuBLASLt algorithm");
  // Newer attributes: left 0 (their default) where a cuBLASLt lacks them.
  Get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, C.InnerShape);
  Get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, C.ClusterShape);
  if (Status != CUBLAS_STATUS_SUCCESS)
    C.InnerShape = C.ClusterShape = 0;
  return C;
}

LibraryStatus LtGemmRunner::run(const void *A, const void *B, void *Y,
                                void *Work, cudaStream_t S) const {
  // cuBLASLt's A is our B and its B our A (Y^T = B^T A^T); C is Y, read
  // with beta 0.
  const void *OurB = ConstB.Ptr ? ConstB.Ptr : B;
  return toLibraryStatus(
      L, L.Lt.cublasLtMatmul(L.LtHandle, Op, &Alpha, OurB, ALayout, A, BLayout,
                             &Beta, Y, CLayout, Y, CLayout, &Algo,
                             Workspace ? Work : nullptr, Workspace, S));
}

} // namespace

llvm::Expected<std::unique_ptr<GemmRunner>>
GemmRunner::create(Libraries &Libs, const GemmDesc &D, const float *ConstantB,
                   const float *Bias, const std::string &AlgoName) {
  Libraries::Impl &L = Libs.getImpl();
  const std::string Key = getGemmKey(D);
  if (!Libs.hasCublasLt())
    return makeLibraryError("gemm '" + Key + "': cuBLASLt was not loaded");
  std::string Why = checkGemm(D);
  if (!Why.empty())
    return makeLibraryError("cuBLASLt cannot run gemm '" + Key + "': " + Why);
  if (D.Epilogue.Bias && !Bias)
    return makeLibraryError("gemm '" + Key + "' was given no bias");
  llvm::Optional<GemmAlgoConfig> Tuned;
  if (!AlgoName.empty()) {
    Tuned = parseGemmAlgo(AlgoName);
    if (!Tuned)
      return makeLibraryError(
          "cannot read the cuBLASLt algorithm '" + AlgoName + "' of gemm '" +
          Key + "' (expected \"" + formatGemmAlgo(GemmAlgoConfig()) + "\")");
  }
  auto R = std::make_unique<LtGemmRunner>(L, D);
  if (llvm::Error E = R->upload(ConstantB, D.Epilogue.Bias ? Bias : nullptr))
    return E;
  if (llvm::Error E = R->describe())
    return E;

  // The full epilogue first; if cuBLASLt has nothing for it, the bias
  // alone, then none (the caller's epilogue does the rest). A tuned
  // algorithm goes down the same ladder: it was timed under whichever of
  // them fused when it was found, and the tuning key names the full one.
  const GemmFusion Full = splitGemmEpilogue(D.Epilogue);
  const GemmFusion BiasOnly = splitGemmEpilogue({D.Epilogue.Bias, false, {}});
  const GemmFusion Plain;
  bool Found = false;
  for (const GemmFusion &F : {Full, BiasOnly, Plain}) {
    if (llvm::Error E = R->setEpilogue(F))
      return E;
    auto Ok = Tuned ? R->pickConfig(*Tuned) : R->pickHeuristic();
    if (!Ok)
      return Ok.takeError();
    Found = *Ok;
    if (Found)
      break;
  }
  if (!Found && Tuned)
    return makeLibraryError("the tuned cuBLASLt algorithm '" + AlgoName +
                            "' cannot run gemm '" + Key +
                            "'; retune or drop it from the tuning file");
  if (!Found)
    return makeLibraryError("cuBLASLt has no algorithm for gemm '" + Key + "'");
  auto Config = R->readConfig();
  if (!Config)
    return Config.takeError();
  R->AlgoName = formatGemmAlgo(*Config);
  return std::unique_ptr<GemmRunner>(std::move(R));
}
