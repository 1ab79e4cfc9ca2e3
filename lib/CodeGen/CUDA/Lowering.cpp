//===- Lowering.cpp - IR graph to CUDA plan -------------------------------===//
//
// The CPU backend's lowering structure on the GPU: the graph is walked in
// order, producers absorb the residual Add and activation after them
// (codegen::findFusionGroups under this backend's rules), each node or
// group is offered to the planning function of its op (a table by OpId),
// and once every step is known the activations are placed in one arena by
// their live ranges (codegen::planArena). Also the small helpers the
// per-op files (Lower*.cpp) share. Host code only: nothing here touches a
// GPU.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/LayoutAlgebra.h"
#include "strider/Runtime/Tensor.h"
#include "strider/Support/Memory.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstring>
#include <iterator>

using namespace strider;
using namespace strider::cuda;

/// The precisions' names, in enumerator order.
static const char *const PrecisionNames[] = {"fp32", "tf32", "fp16", "bf16"};

llvm::Optional<Precision> cuda::parsePrecision(llvm::StringRef Name) {
  for (size_t I = 0; I < std::size(PrecisionNames); ++I)
    if (Name == PrecisionNames[I])
      return Precision(I);
  return llvm::None;
}

llvm::StringRef cuda::getPrecisionName(Precision P) {
  return size_t(P) < std::size(PrecisionNames) ? PrecisionNames[size_t(P)]
                                               : "?";
}

llvm::Optional<DType> cuda::getDType(ElementType E) {
  switch (E) {
  case ElementType::F32:
    return DType::F32;
  case ElementType::F16:
    return DType::F16;
  case ElementType::BF16:
    return DType::BF16;
  default:
    return llvm::None;
  }
}

DType cuda::dtypeOf(const Value *V) {
  return getDType(V->getType().getElementType()).getValueOr(DType::F32);
}

int64_t cuda::getPixels(llvm::ArrayRef<int64_t> Shape) {
  int64_t P = 1;
  for (size_t I = 2; I < Shape.size(); ++I)
    P *= Shape[I];
  return P;
}

void cuda::toPhysical(const TensorType &YT, llvm::ArrayRef<int64_t> Logical,
                      int64_t *Out) {
  unsigned P = 0;
  for (unsigned D : YT.getLayout().getPermutation(YT.getRank()))
    Out[P++] = Logical[D];
}

std::vector<int64_t> cuda::getLogicalStrides(const Value *V) {
  auto S = codegen::getStrides(V->getType());
  return std::vector<int64_t>(S.begin(), S.end());
}

std::shared_ptr<const std::vector<float>> cuda::share(std::vector<float> V) {
  return std::make_shared<const std::vector<float>>(std::move(V));
}

std::string cuda::getStepNodes(const Node &N, const FusedTail &T) {
  std::string S;
  auto Add = [&](const Node &M) {
    for (unsigned I = 0; I < M.getNumResults(); ++I)
      if (M.hasResult(I))
        S += (S.empty() ? "" : ",") + M.getResult(I)->getName();
  };
  Add(N);
  for (const Node *M : T.Followers)
    Add(*M);
  return S;
}

std::string cuda::getEpilogueSuffix(const EpilogueSpec &E) {
  std::string S;
  if (E.Bias)
    S += "+bias";
  if (E.Residual)
    S += "+residual";
  if (!E.Act.isNone())
    S += std::string("+") + E.Act.getName();
  return S;
}

codegen::ChannelOrder cuda::getSharedChannelOrder(const TensorType &X,
                                                  const TensorType &Y) {
  const ChannelOrder XO = codegen::getChannelOrder(X),
                     YO = codegen::getChannelOrder(Y);
  if (XO == YO)
    return XO;
  auto ReadsAs = [](const TensorType &T, const TensorType &Other) {
    return layout::areLayoutsEquivalent(
        T.getShape(), T.getLayout(), Other.getLayout(), layout::DimBindings());
  };
  if (YO != ChannelOrder::Other && X.getRank() == Y.getRank() && ReadsAs(X, Y))
    return YO;
  if (XO != ChannelOrder::Other && X.getRank() == Y.getRank() && ReadsAs(Y, X))
    return XO;
  return ChannelOrder::Other;
}

void cuda::collapseDims(llvm::SmallVectorImpl<int64_t> &Shape,
                        llvm::MutableArrayRef<DimStrides> Strides) {
  size_t Kept = 0;
  for (size_t I = 0; I < Shape.size(); ++I) {
    if (Shape[I] == 1)
      continue;
    const bool Nests =
        Kept > 0 && llvm::all_of(Strides, [&](const DimStrides &S) {
          return S[Kept - 1] == S[I] * Shape[I];
        });
    if (Nests) {
      Shape[Kept - 1] *= Shape[I];
      for (DimStrides &S : Strides)
        S[Kept - 1] = S[I];
      continue;
    }
    Shape[Kept] = Shape[I];
    for (DimStrides &S : Strides)
      S[Kept] = S[I];
    ++Kept;
  }
  if (Kept == 0) {
    // A single element: one dim of 1.
    Shape.assign(1, 1);
    for (DimStrides &S : Strides)
      S.assign(1, 0);
    return;
  }
  Shape.resize(Kept);
  for (DimStrides &S : Strides)
    S.resize(Kept);
}

const char *cuda::getOrderName(bool ChannelsLast) {
  return ChannelsLast ? "nhwc" : "nchw";
}

llvm::Error cuda::unsupported(const Node &N, const llvm::Twine &What) {
  return makeNodeError(N, "no CUDA kernel for " + What);
}

//===----------------------------------------------------------------------===//
// PlanContext
//===----------------------------------------------------------------------===//

MathMode PlanContext::getMathMode(DType T) const {
  if (T != DType::F32)
    return MathMode::Half;
  return Opts.Math == Precision::TF32 ? MathMode::TF32 : MathMode::FP32;
}

static llvm::Error checkHeld(const Value *V, const Node &User) {
  const TensorType &T = V->getType();
  if (!T.hasStaticShape())
    return makeNodeError(User, "value '" + V->getName() + "' has type " +
                                   T.str() +
                                   ": the CUDA backend needs static shapes "
                                   "(bind symbolic dims with --dim)");
  if (!getScalarType(T.getElementType()))
    return makeNodeError(User, "value '" + V->getName() + "' has type " +
                                   T.str() +
                                   ": the CUDA backend holds float, integer "
                                   "and bool tensors");
  return llvm::Error::success();
}

llvm::Expected<BufferId> PlanContext::getBuffer(const Value *V,
                                                const Node &User) {
  auto It = BufferOf.find(V);
  if (It != BufferOf.end())
    return It->second;
  const TensorData *D = V->getConstantData();
  if (!D) // A planner that defined fewer results than the graph reads.
    return makeNodeError(User, "value '" + V->getName() +
                                   "' is read but no CUDA step computes it");
  if (llvm::Error E = checkHeld(V, User))
    return E;
  runtime::Tensor T =
      runtime::Tensor::fromData(*D).withLayout(V->getType().getLayout());
  llvm::ArrayRef<uint8_t> Bytes = T.getBytes();
  BufferId B = addConstant(std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
  BufferOf[V] = B;
  return B;
}

llvm::Expected<BufferId> PlanContext::defineBuffer(const Value *V,
                                                   const Node &Def) {
  if (llvm::Error E = checkHeld(V, Def))
    return E;
  BufferId B = BufferId(P.Buffers.size());
  PlanBuffer Info;
  Info.Bytes = codegen::getByteSize(V->getType());
  P.Buffers.push_back(Info);
  BufferOf[V] = B;
  return B;
}

llvm::Expected<Arg> PlanContext::getOptionalArg(const Value *V,
                                                const Node &User) {
  if (!V)
    return Arg();
  llvm::Expected<BufferId> B = getBuffer(V, User);
  if (!B)
    return B.takeError();
  return Arg{*B, 0};
}

llvm::Error PlanContext::bindBuffers(const Node &N,
                                     llvm::ArrayRef<BufferSlot> Operands,
                                     llvm::ArrayRef<BufferSlot> Results) {
  for (const BufferSlot &S : Operands) {
    llvm::Expected<BufferId> B = getBuffer(S.first, N);
    if (!B)
      return B.takeError();
    *S.second = *B;
  }
  for (const BufferSlot &S : Results) {
    llvm::Expected<BufferId> B = defineBuffer(S.first, N);
    if (!B)
      return B.takeError();
    *S.second = *B;
  }
  return llvm::Error::success();
}

BufferId PlanContext::addScratch(int64_t Bytes) {
  BufferId B = BufferId(P.Buffers.size());
  PlanBuffer Info;
  Info.Bytes = Bytes;
  P.Buffers.push_back(Info);
  return B;
}

BufferId PlanContext::addConstant(std::vector<uint8_t> Data) {
  BufferId B = BufferId(P.Buffers.size());
  PlanBuffer Info;
  Info.Bytes = int64_t(Data.size());
  Info.IsConstant = true;
  Info.Data = std::make_shared<const std::vector<uint8_t>>(std::move(Data));
  P.ConstantBytes =
      int64_t(addSaturated(uint64_t(P.ConstantBytes), uint64_t(Info.Bytes)));
  P.Buffers.push_back(std::move(Info));
  return B;
}

BufferId PlanContext::addConstantFloats(llvm::ArrayRef<float> Data) {
  std::vector<uint8_t> Bytes(Data.size() * sizeof(float));
  if (!Data.empty())
    std::memcpy(Bytes.data(), Data.data(), Bytes.size());
  return addConstant(std::move(Bytes));
}

void PlanContext::alias(const Value *Result, const Value *Operand) {
  BufferOf[Result] = BufferOf.lookup(Operand);
}

void PlanContext::addStep(StepInfo Info, StepParams Params,
                          std::vector<Arg> Args) {
  PlanStep S;
  S.Info = Info;
  // The kernels that report bad indices and lengths name their step.
  const int32_t Index = int32_t(P.Steps.size());
  if (auto *T = std::get_if<TypedParams>(&Params))
    T->PlanStep = Index;
  else if (auto *L = std::get_if<LstmCellParams>(&Params))
    L->Time.PlanStep = Index;
  else if (auto *G = std::get_if<GruCellParams>(&Params))
    G->Time.PlanStep = Index;
  else if (auto *R = std::get_if<RecurrenceLoopParams>(&Params))
    R->Lstm.Time.PlanStep = R->Gru.Time.PlanStep = Index;
  S.Params = std::move(Params);
  S.Args = std::move(Args);
  // The written arguments: the last activation of the list for every kind
  // but the library steps (Y is third of four), those of X then Y, and the
  // recurrent cells (their states and outputs).
  llvm::SmallVector<int, 3> Written;
  if (std::holds_alternative<ConvStep>(S.Params) ||
      std::holds_alternative<GemmStep>(S.Params))
    Written = {2};
  else if (std::holds_alternative<ResizeParams>(S.Params) ||
           std::holds_alternative<CopyPlan>(S.Params) ||
           std::holds_alternative<PadParams>(S.Params) ||
           std::holds_alternative<ReduceParams>(S.Params) ||
           std::holds_alternative<SoftmaxParams>(S.Params) ||
           std::holds_alternative<LrnParams>(S.Params))
    Written = {1};
  else if (std::holds_alternative<PoolParams>(S.Params))
    Written = {1, 2}; // Y, and MaxPool's indices.
  else if (std::holds_alternative<BatchStatsParams>(S.Params))
    Written = {5, 6, 7, 8}; // Scale, Shift and the running statistics.
  else if (std::holds_alternative<NormParams>(S.Params))
    Written = {3, 4, 5}; // Y, and LayerNormalization's statistics.
  else if (std::holds_alternative<TypedParams>(S.Params) && S.Args.size() > 4)
    Written = {3, 4}; // TopK's values and positions.
  else if (std::holds_alternative<LstmCellParams>(S.Params))
    Written = {3, 4, 5};
  else if (std::holds_alternative<RecurrenceLoopParams>(S.Params))
    Written = {5, 6, 7, 8, 9, 10};
  else if (const auto *G = std::get_if<GruCellParams>(&S.Params))
    Written = G->Stage == GruCellParams::Reset
                  ? llvm::SmallVector<int, 3>{5}
                  : llvm::SmallVector<int, 3>{4, 5};
  else
    Written = {int(S.Args.size()) - 1};
  for (int I = 0; I < int(S.Args.size()); ++I) {
    const BufferId B = S.Args[size_t(I)].Buffer;
    if (B < 0 || P.Buffers[size_t(B)].IsConstant)
      continue;
    (llvm::is_contained(Written, I) ? S.Writes : S.Reads).push_back(B);
  }
  P.Infos.push_back(S.Info);
  P.Steps.push_back(std::move(S));
}

llvm::Expected<std::vector<bool>> cuda::getReducedDims(const Node &N) {
  const int64_t R = N.getOperand(0)->getType().getRank();
  std::vector<bool> Reduced(size_t(R), false);
  if (!N.hasOperand(1))
    return Reduced;
  const TensorData *D = N.getOperand(1)->getConstantData();
  if (!D)
    return unsupported(N, N.getOpType() + " with axes computed at run time");
  for (int64_t A : D->toInt64Vector()) {
    if (A < -R || A >= R)
      return unsupported(N, N.getOpType() + " over axis " + llvm::Twine(A));
    Reduced[size_t(A < 0 ? A + R : A)] = true;
  }
  return Reduced;
}

llvm::Error cuda::getInOut(PlanContext &C, const Node &N, const Value *X,
                           const Value *Y, BufferId &XB, BufferId &YB) {
  auto XE = C.getBuffer(X, N);
  if (!XE)
    return XE.takeError();
  XB = *XE;
  auto YE = C.defineBuffer(Y, N);
  if (!YE)
    return YE.takeError();
  YB = *YE;
  return llvm::Error::success();
}

std::string cuda::describeRunError(const PlanImpl &P, const RunError &R) {
  std::string Where = "a step";
  if (R.Step >= 0 && size_t(R.Step) < P.Steps.size()) {
    const StepInfo &I = P.Steps[size_t(R.Step)].Info;
    Where = "step '" + I.Nodes + "' (" + I.Kernel + ")";
  }
  switch (R.What) {
  case RunError::Index:
    return Where + ": index " + std::to_string(R.Value) +
           " is out of range for an axis of size " + std::to_string(R.Bound);
  case RunError::SequenceLength:
    return Where + ": a sequence_lens entry is " + std::to_string(R.Value) +
           ", outside [0, " + std::to_string(R.Bound) + "]";
  default:
    return Where + ": the run failed a check of its data";
  }
}

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

namespace {

using PlanTable = std::array<PlanFn, size_t(OpId::Opaque)>;

llvm::Error planConstant(PlanContext &, const Node &, const FusedTail &) {
  // Constants get a buffer when a step reads them as one.
  return llvm::Error::success();
}

const PlanTable &getPlanTable() {
  static const PlanTable Table = [] {
    PlanTable T{};
    T[size_t(OpId::Conv)] = planConv;
    T[size_t(OpId::ConvTranspose)] = planConv;
    T[size_t(OpId::Gemm)] = planGemm;
    T[size_t(OpId::MatMul)] = planMatMul;
    for (OpId Id : codegen::getActivationOps())
      T[size_t(Id)] = planElementwise;
    for (OpId Id : {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::PRelu,
                    OpId::Pow, OpId::Max, OpId::Min, OpId::Sum})
      T[size_t(Id)] = planElementwise;
    T[size_t(OpId::BatchNormalization)] = planBatchNorm;
    T[size_t(OpId::InstanceNormalization)] = planNorm;
    T[size_t(OpId::LayerNormalization)] = planNorm;
    T[size_t(OpId::MaxPool)] = planPool;
    T[size_t(OpId::AveragePool)] = planPool;
    T[size_t(OpId::GlobalAveragePool)] = planGlobalPool;
    T[size_t(OpId::GlobalMaxPool)] = planGlobalPool;
    for (OpId Id :
         {OpId::ReduceMean, OpId::ReduceMax, OpId::ReduceSum, OpId::ReduceMin,
          OpId::ReduceProd, OpId::ReduceL2, OpId::ReduceSumSquare})
      T[size_t(Id)] = planReduce;
    T[size_t(OpId::Softmax)] = planSoftmax;
    T[size_t(OpId::LogSoftmax)] = planSoftmax;
    T[size_t(OpId::LRN)] = planLrn;
    T[size_t(OpId::LSTM)] = planLstm;
    T[size_t(OpId::GRU)] = planGru;
    T[size_t(OpId::STFT)] = planSTFT;
    T[size_t(OpId::Einsum)] = planEinsum;
    T[size_t(OpId::GatherElements)] = planIndexedGather;
    T[size_t(OpId::ScatterElements)] = planScatterElements;
    T[size_t(OpId::ArgMax)] = planArgReduce;
    T[size_t(OpId::ArgMin)] = planArgReduce;
    T[size_t(OpId::TopK)] = planTopK;
    T[size_t(OpId::Trilu)] = planTrilu;
    T[size_t(OpId::GridSample)] = planGridSample;
    T[size_t(OpId::CumSum)] = planCumSum;
    T[size_t(OpId::GatherND)] = planGatherND;
    T[size_t(OpId::QuantizeLinear)] = planQuantize;
    T[size_t(OpId::DequantizeLinear)] = planQuantize;
    T[size_t(OpId::ScatterND)] = planScatterND;
    for (OpId Id :
         {OpId::Equal, OpId::Less, OpId::LessOrEqual, OpId::Greater,
          OpId::GreaterOrEqual, OpId::And, OpId::Or, OpId::Xor, OpId::Not,
          OpId::Where, OpId::Mod, OpId::BitShift, OpId::IsNaN, OpId::IsInf})
      T[size_t(Id)] = planTyped;
    // Transposes are copies here (the CPU backend's views of them are not
    // planned on the GPU).
    for (size_t Id = 0; Id < T.size(); ++Id)
      if (hasOpTrait(OpId(Id), optrait::View) && OpId(Id) != OpId::Transpose)
        T[Id] = planView;
    for (OpId Id : {OpId::Transpose, OpId::Relayout, OpId::Cast, OpId::Expand})
      T[size_t(Id)] = planCopyLike;
    T[size_t(OpId::Concat)] = planConcat;
    T[size_t(OpId::Split)] = planSplit;
    T[size_t(OpId::Slice)] = planSlice;
    T[size_t(OpId::Pad)] = planPad;
    T[size_t(OpId::Resize)] = planResize;
    T[size_t(OpId::Tile)] = planTile;
    T[size_t(OpId::Gather)] = planGather;
    T[size_t(OpId::DepthToSpace)] = planDepthSpace;
    T[size_t(OpId::SpaceToDepth)] = planDepthSpace;
    T[size_t(OpId::Constant)] = planConstant;
    return T;
  }();
  return Table;
}

/// Ops that see integer and bool activations: the typed kernel's, the
/// indexed gathers and scatters, ArgMax/ArgMin and TopK (which run on it
/// too), the views (which share their operand's buffer), Transpose and
/// relayouts, Expand, Concat, Split, Slice, Tile, DepthToSpace and
/// SpaceToDepth (the typed kernel's copy for those types), the
/// recurrences (sequence_lens; their planner takes only f32 otherwise),
/// MaxPool (of i8 and u8, and its indices), Einsum (of f64 and integers)
/// and Trilu. The float kernels never do.
bool takesIndexTypes(const Node &N) {
  if (isTypedStep(N))
    return true;
  switch (N.getOpId()) {
  case OpId::Gather:
  case OpId::GatherElements:
  case OpId::ScatterElements:
  case OpId::ArgMax:
  case OpId::ArgMin:
  case OpId::TopK:
  case OpId::Transpose:
  case OpId::Relayout:
  case OpId::Expand:
  case OpId::Concat:
  case OpId::Split:
  case OpId::Slice:
  case OpId::Tile:
  case OpId::DepthToSpace:
  case OpId::SpaceToDepth:
  case OpId::LSTM:
  case OpId::GRU:
  case OpId::Reshape:
  case OpId::Flatten:
  case OpId::Squeeze:
  case OpId::Unsqueeze:
  case OpId::Identity:
  case OpId::Dropout: // Its mask: a typed fill.
  case OpId::Pad:     // Of integers, bools, f64: the typed kernel.
  case OpId::MaxPool: // Its planner checks the types.
  case OpId::Einsum:  // Of f64 and integers: the typed kernel.
  case OpId::Trilu:   // The typed kernel, any type.
  case OpId::CumSum:  // The typed kernel, any number type.
  case OpId::GatherND:
  case OpId::ScatterND:
  case OpId::QuantizeLinear: // Its planner checks the types.
  case OpId::DequantizeLinear:
    return true;
  default:
    return false;
  }
}

llvm::Error planNode(PlanContext &C, const Node &N, const FusedTail &T) {
  PlanFn F = N.isOpaque() ? nullptr : getPlanTable()[size_t(N.getOpId())];
  if (!F)
    return unsupported(N, "op '" + N.getOpType() +
                              "' (run the model with --backend=cpu)");
  if (isTypedStep(N))
    return planTyped(C, N, T);
  // Integer and bool activations (shape operands are constants the
  // planners read at compile time) go only where their types are known.
  if (!takesIndexTypes(N)) {
    auto IsIndex = [](const Value *V) {
      return V && !V->getConstantData() &&
             !getDType(V->getType().getElementType());
    };
    for (const Value *V : N.getOperands())
      if (IsIndex(V))
        return unsupported(N, "op '" + N.getOpType() + "' reading " +
                                  V->getType().str() +
                                  " (integer, bool and f64 tensors go "
                                  "through comparisons, logic, Where, Cast, "
                                  "their arithmetic and views)");
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (IsIndex(N.getResult(I)))
        return unsupported(N, "op '" + N.getOpType() + "' computing " +
                                  N.getResult(I)->getType().str());
  }
  return F(C, N, T);
}

} // namespace

bool cuda::hasPlanner(OpId Id) {
  return Id != OpId::Opaque && getPlanTable()[size_t(Id)] != nullptr;
}

llvm::Expected<std::unique_ptr<Plan>>
cuda::planForCUDA(const Graph &G, const CUDAOptions &Opts) {
  for (const Node *N : G.nodes())
    if (N->isOpaque())
      return makeNodeError(*N, "op '" + N->getOpType() +
                                   "' is not supported (no kernel in any "
                                   "backend)");
  auto P = std::make_unique<PlanImpl>();
  P->Math = Opts.Math;
  PlanContext C(G, *P, Opts);

  std::vector<const Node *> Order(G.nodes().begin(), G.nodes().end());
  for (const Value *In : G.getInputs()) {
    if (In->getConstantData() && !In->hasUses())
      continue;
    if (llvm::Error E = checkHeld(In, *Order.front()))
      return makeGraphError(
          G, "input '" + In->getName() + "' has type " + In->getType().str() +
                 ": the CUDA backend takes static f32, f16, "
                 "bf16, f64, i8, u8, i16, u16, i32, u32, i64, u64 and "
                 "bool inputs");
    Binding B;
    B.Name = In->getName();
    B.Type = In->getType();
    B.Buffer = *C.defineBuffer(In, *Order.front());
    B.Default = In->getDefaultData();
    P->Inputs.push_back(B);
  }

  const PlanTable &Table = getPlanTable();
  codegen::FusionGroups Groups =
      codegen::findFusionGroups(G, Order, [&](const Node &N) {
        return bool(Table[size_t(N.getOpId())]);
      });
  const codegen::ProgramOrder Positions(G, Order, Groups);
  C.setOrder(&Positions);

  // Planning functions check everything before they add a step, so a
  // declined group adds nothing; a node declined alone is an error.
  if (llvm::Error E = codegen::lowerNodes(
          Order, Groups,
          [&](const Node &N, const FusedTail &T) { return planNode(C, N, T); },
          [](const Node &, llvm::Error Why) { return Why; }))
    return E;

  for (const Value *Out : G.getOutputs()) {
    Binding B;
    B.Name = Out->getName();
    B.Type = Out->getType();
    const Node *Def = Out->getDefiningNode();
    auto Buf = C.getBuffer(Out, Def ? *Def : *Order.back());
    if (!Buf)
      return Buf.takeError();
    B.Buffer = *Buf;
    P->Outputs.push_back(B);
  }

  // 256 bytes: cudaMalloc's alignment, which cuDNN and cuBLASLt prefer.
  codegen::ArenaPlan Arena = codegen::planBufferArena(
      P->Buffers, P->Steps, P->Inputs, P->Outputs, 256);
  P->Offsets = std::move(Arena.Offsets);
  P->ArenaBytes = Arena.ArenaBytes;
  return std::make_unique<Plan>(std::move(P));
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

Plan::Plan(std::unique_ptr<PlanImpl> Impl) : Impl(std::move(Impl)) {}
Plan::~Plan() = default;
llvm::ArrayRef<StepInfo> Plan::getSteps() const { return Impl->Infos; }
int64_t Plan::getArenaBytes() const { return Impl->ArenaBytes; }
int64_t Plan::getConstantBytes() const { return Impl->ConstantBytes; }

void Plan::print(llvm::raw_ostream &OS) const {
  for (const StepInfo &S : Impl->Infos) {
    OS << "  " << S.Nodes << ": " << S.Kernel;
    if (S.Flops)
      OS << "  (" << llvm::format("%.3f", double(S.Flops) * 1e-9) << " GFLOP)";
    OS << "\n";
  }
  OS << "steps " << Impl->Infos.size() << ", arena " << Impl->ArenaBytes
     << " bytes, constants " << Impl->ConstantBytes << " bytes\n";
}
