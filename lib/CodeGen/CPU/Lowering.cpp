//===- Lowering.cpp - IR graph to CPU program -----------------------------===//
//
// Walks the graph in order. Each node is first offered to the lowering
// function of its op (a table by OpId); producers that take an epilogue
// absorb a following residual Add and activation (the fusion group is
// emitted at its last node, when every operand exists). A node no fast
// kernel takes runs its reference kernel on the program's buffers. Once
// all steps exist, live ranges are known and the memory planner places
// every activation in one arena.
//
//===----------------------------------------------------------------------===//

#include "ProgramImpl.h"

#include "strider/CodeGen/Fusion.h"
#include "strider/IR/Diagnostics.h"
#include "strider/Layout/CostModel.h"
#include "strider/Support/Memory.h"

#include "hwy/targets.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace strider;
using namespace strider::cpu;
using runtime::Tensor;
using runtime::TensorMap;

/// memcpy that accepts empty ranges (whose pointers may be null).
static void copyBytes(void *Dst, const void *Src, size_t N) {
  if (N)
    std::memcpy(Dst, Src, N);
}

bool cpu::isF32(const Value *V) {
  return V && V->getType().getElementType() == ElementType::F32;
}

std::string cpu::withTail(std::string Name, const FusedTail &T) {
  if (T.Residual)
    Name += "+add";
  if (!T.Act.isNone())
    Name += std::string("+") + T.Act.getName();
  return Name;
}

bool cpu::isCopyableSize(unsigned Bytes) {
  return Bytes == 1 || Bytes == 2 || Bytes == 4 || Bytes == 8;
}

bool cpu::isConstantF32(const Value *V) {
  const TensorData *D = V ? V->getConstantData() : nullptr;
  return D && D->getElementType() == ElementType::F32 &&
         D->getNumElements() > 0;
}

std::string cpu::getDerivedFormat() {
  const GemmBlocking B = getGemmBlocking();
  return Program::getSimdTarget() + " mr" + std::to_string(B.MR) + " nr" +
         std::to_string(B.NR);
}

const float *
LoweringContext::deriveFloats(llvm::StringRef Key, size_t Count,
                              llvm::function_ref<void(float *)> Fill,
                              const Value *Source) {
  P.ConstantBytes += int64_t(Count * sizeof(float));
  const TensorDataRef From = Source ? Source->getConstantDataRef() : nullptr;
  if (Derived)
    if (std::shared_ptr<const float> Stored =
            Derived->find(Key, Count, From.get()))
      return own(std::move(Stored));
  auto Data = std::make_shared<AlignedFloats>(allocateFloats(Count));
  std::fill(Data->get(), Data->get() + Count, 0.0f);
  Fill(Data->get());
  if (Derived)
    Derived->add(Key, std::shared_ptr<const float>(Data, Data->get()), Count,
                 From);
  return own(Data)->get();
}

PackedOperand LoweringContext::packConstantA(llvm::StringRef Key,
                                             const APacker &Packer, int64_t M,
                                             int64_t K, const Value *Source) {
  const std::string Full =
      (Key + "/A" + llvm::Twine(getGemmBlocking().MR)).str();
  return viewPackedA(deriveFloats(
                         Full, getPackedASize(M, K),
                         [&](float *Dst) { packAInto(Packer, M, K, Dst); },
                         Source),
                     M, K);
}

PackedOperand LoweringContext::packConstantB(llvm::StringRef Key,
                                             const BPacker &Packer, int64_t N,
                                             int64_t K, const Value *Source) {
  const std::string Full =
      (Key + "/B" + llvm::Twine(getGemmBlocking().NR)).str();
  return viewPackedB(deriveFloats(
                         Full, getPackedBSize(N, K),
                         [&](float *Dst) { packBInto(Packer, N, K, Dst); },
                         Source),
                     N, K);
}

std::shared_ptr<AlignedFloats>
cpu::makePaddedFloats(llvm::ArrayRef<float> Values, int64_t Count) {
  const int64_t Padded = (Count + 63) / 64 * 64 + 64;
  auto Out = std::make_shared<AlignedFloats>(allocateFloats(size_t(Padded)));
  std::fill(Out->get(), Out->get() + Padded, 0.0f);
  std::copy(Values.begin(), Values.end(), Out->get());
  return Out;
}

//===----------------------------------------------------------------------===//
// LoweringContext
//===----------------------------------------------------------------------===//

BufferId LoweringContext::getBuffer(const Value *V) {
  auto It = BufferOf.find(V);
  if (It != BufferOf.end())
    return It->second;
  assert(V->getConstantData() && "operand used before its definition");
  const TensorDataRef &D =
      V->getDefiningNode()->getAttr("value")->getTensor();
  BufferId B = BufferId(P.Buffers.size());
  BufferInfo Info;
  Info.Bytes = codegen::getByteSize(D->getType());
  Info.IsConstant = true;
  P.Buffers.push_back(Info);
  P.ConstantSlot.resize(P.Buffers.size(), -1);
  P.ConstantSlot[B] = int(P.Constants.size());
  P.Constants.push_back(D);
  P.ConstantBytes =
      int64_t(addSaturated(uint64_t(P.ConstantBytes), uint64_t(Info.Bytes)));
  BufferOf[V] = B;
  return B;
}

BufferId LoweringContext::defineBuffer(const Value *V) {
  BufferId B = BufferId(P.Buffers.size());
  BufferInfo Info;
  Info.Bytes = codegen::getByteSize(V->getType());
  P.Buffers.push_back(Info);
  P.ConstantSlot.resize(P.Buffers.size(), -1);
  P.UnplannedBytes =
      int64_t(addSaturated(uint64_t(P.UnplannedBytes), uint64_t(Info.Bytes)));
  BufferOf[V] = B;
  return B;
}

BufferId LoweringContext::defineScratch(int64_t Bytes) {
  BufferId B = BufferId(P.Buffers.size());
  BufferInfo Info;
  Info.Bytes = Bytes;
  P.Buffers.push_back(Info);
  P.ConstantSlot.resize(P.Buffers.size(), -1);
  return B;
}

void LoweringContext::alias(const Value *Result, const Value *Operand) {
  BufferOf[Result] = getBuffer(Operand);
}

llvm::Optional<LoweringContext::ConcatSlot>
LoweringContext::findConcatSlot(const Value *V) const {
  if (!V || V->isGraphInput() || G.isGraphOutput(V) || V->getConstantData() ||
      V->getUses().size() != 1)
    return llvm::None;
  const Node *C = V->getUses().front().User;
  if (C->isOpaque() || C->getOpId() != OpId::Concat || !C->hasResult(0))
    return llvm::None;
  // The conditions under which lowerConcat takes the node.
  const TensorType &YT = C->getResult(0)->getType();
  unsigned R = YT.getRank();
  if (R == 0 || R > 6 || YT.getElementType() != ElementType::F32 ||
      V->getType().getLayout() != YT.getLayout())
    return llvm::None;
  int64_t Axis = C->getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= int64_t(R))
    return llvm::None;
  ConcatSlot S;
  S.Concat = C->getResult(0);
  for (int64_t St : getStrides(YT))
    S.Strides.push_back(St);
  int64_t Off = 0;
  bool Found = false;
  for (const Value *Op : C->getOperands()) {
    if (!Op || Op->getType().getElementType() != ElementType::F32)
      return llvm::None;
    if (Op == V)
      Found = true;
    else if (!Found)
      Off += Op->getType().getStaticShape()[size_t(Axis)];
  }
  if (!Found)
    return llvm::None;
  S.Offset = Off * S.Strides[size_t(Axis)];
  return S;
}

BufferId LoweringContext::useConcatSlot(const Value *V, const ConcatSlot &S) {
  InConcatSlot.insert(V);
  return hasBuffer(S.Concat) ? BufferOf.lookup(S.Concat)
                             : defineBuffer(S.Concat);
}

BufferId
LoweringContext::defineOver(const Value *Result,
                            std::initializer_list<const Value *> Operands,
                            const Node &Last) {
  for (const Value *V : Operands)
    if (V && V->getType() == Result->getType() &&
        canOverwrite(V, getNodeIndex(&Last))) {
      alias(Result, V);
      return getBuffer(V);
    }
  return defineBuffer(Result);
}

void LoweringContext::addStep(StepInfo Info, std::vector<BufferId> Reads,
                              std::vector<BufferId> Writes,
                              std::function<void(Frame &)> Run) {
  P.Infos.push_back(Info);
  P.Steps.push_back(
      {std::move(Info), std::move(Reads), std::move(Writes), std::move(Run)});
}

//===----------------------------------------------------------------------===//
// Fusion and the op table
//===----------------------------------------------------------------------===//

bool cpu::lowerConstant(LoweringContext &, const Node &N, const FusedTail &) {
  // Constants live outside the arena, and get a buffer only when a step
  // reads them as one (weights that kernels read packed do not); no step.
  return N.getResult(0)->getConstantData() != nullptr;
}

namespace {

using LowerTable = std::array<LowerFn, size_t(OpId::Opaque)>;

const LowerTable &getLowerTable() {
  static const LowerTable Table = [] {
    LowerTable T{};
    T[size_t(OpId::Conv)] = lowerConv;
    T[size_t(OpId::QLinearConv)] = lowerQLinearConv;
    T[size_t(OpId::ConvInteger)] = lowerConvInteger;
    T[size_t(OpId::ConvTranspose)] = lowerConvTranspose;
    T[size_t(OpId::Gemm)] = lowerGemm;
    T[size_t(OpId::MatMul)] = lowerMatMul;
    T[size_t(OpId::Einsum)] = lowerEinsum;
    T[size_t(OpId::LSTM)] = lowerLSTM;
    T[size_t(OpId::GRU)] = lowerGRU;
    for (OpId Id : codegen::getActivationOps())
      T[size_t(Id)] = lowerUnary;
    for (OpId Id : {OpId::Equal, OpId::Less, OpId::LessOrEqual, OpId::Greater,
                    OpId::GreaterOrEqual, OpId::And, OpId::Or, OpId::Xor})
      T[size_t(Id)] = lowerCompare;
    T[size_t(OpId::Not)] = lowerNot;
    T[size_t(OpId::IsNaN)] = lowerClassify;
    T[size_t(OpId::IsInf)] = lowerClassify;
    T[size_t(OpId::QuantizeLinear)] = lowerQuantize;
    T[size_t(OpId::DequantizeLinear)] = lowerQuantize;
    T[size_t(OpId::Lookup)] = lowerLookup;
    T[size_t(OpId::QBinary)] = lowerQBinary;
    T[size_t(OpId::Mod)] = lowerArith;
    T[size_t(OpId::BitShift)] = lowerArith;
    T[size_t(OpId::Where)] = lowerWhere;
    T[size_t(OpId::Expand)] = lowerExpand;
    T[size_t(OpId::Cast)] = lowerCast;
    for (OpId Id : {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::PRelu,
                    OpId::Pow, OpId::Max, OpId::Min, OpId::Sum})
      T[size_t(Id)] = lowerBinary;
    T[size_t(OpId::BatchNormalization)] = lowerBatchNorm;
    T[size_t(OpId::InstanceNormalization)] = lowerInstanceNorm;
    T[size_t(OpId::LayerNormalization)] = lowerLayerNorm;
    T[size_t(OpId::LRN)] = lowerLRN;
    T[size_t(OpId::Resize)] = lowerResize;
    T[size_t(OpId::GridSample)] = lowerGridSample;
    T[size_t(OpId::Softmax)] = lowerSoftmax;
    T[size_t(OpId::LogSoftmax)] = lowerSoftmax;
    for (OpId Id :
         {OpId::ReduceMean, OpId::ReduceMax, OpId::ReduceSum, OpId::ReduceMin,
          OpId::ReduceProd, OpId::ReduceL2, OpId::ReduceSumSquare})
      T[size_t(Id)] = lowerReduce;
    T[size_t(OpId::ArgMax)] = lowerArgReduce;
    T[size_t(OpId::ArgMin)] = lowerArgReduce;
    T[size_t(OpId::CumSum)] = lowerCumSum;
    T[size_t(OpId::MaxPool)] = lowerPool;
    T[size_t(OpId::AveragePool)] = lowerPool;
    T[size_t(OpId::GlobalAveragePool)] = lowerGlobalPool;
    T[size_t(OpId::GlobalMaxPool)] = lowerGlobalPool;
    T[size_t(OpId::Concat)] = lowerConcat;
    T[size_t(OpId::Split)] = lowerSplit;
    T[size_t(OpId::Slice)] = lowerSlice;
    T[size_t(OpId::Tile)] = lowerTile;
    T[size_t(OpId::TopK)] = lowerTopK;
    T[size_t(OpId::STFT)] = lowerSTFT;
    T[size_t(OpId::Gather)] = lowerGather;
    T[size_t(OpId::GatherElements)] = lowerGatherElements;
    T[size_t(OpId::ScatterElements)] = lowerScatterElements;
    T[size_t(OpId::GatherND)] = lowerGatherND;
    T[size_t(OpId::ScatterND)] = lowerScatterND;
    T[size_t(OpId::Pad)] = lowerPad;
    T[size_t(OpId::DepthToSpace)] = lowerDepthToSpace;
    T[size_t(OpId::SpaceToDepth)] = lowerDepthToSpace;
    T[size_t(OpId::Relayout)] = lowerRelayout;
    T[size_t(OpId::Constant)] = lowerConstant;
    for (size_t Id = 0; Id < T.size(); ++Id)
      if (hasOpTrait(OpId(Id), optrait::View))
        T[Id] = lowerView;
    return T;
  }();
  return Table;
}

std::string getResultNames(const Node &N) {
  std::string S;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    if (!N.hasResult(I))
      continue;
    if (!S.empty())
      S += ",";
    S += N.getResult(I)->getName();
  }
  return S;
}

/// Runs \p N's reference kernel on the program's buffers.
llvm::Error addFallback(LoweringContext &L, const Node &N) {
  runtime::ReferenceKernel K = runtime::lookupReferenceKernel(N.getOpId());
  if (N.isOpaque() || !K)
    return makeNodeError(N, "no kernel for op '" + N.getOpType() + "'");
  std::vector<BufferId> Reads, Writes;
  std::vector<TensorType> OperandTypes, ResultTypes;
  for (const Value *Op : N.getOperands()) {
    Reads.push_back(Op ? L.getBuffer(Op) : -1);
    OperandTypes.push_back(Op ? Op->getType() : TensorType());
  }
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    if (!N.hasResult(I)) {
      Writes.push_back(-1);
      ResultTypes.push_back(TensorType());
      continue;
    }
    Writes.push_back(L.defineBuffer(N.getResult(I)));
    ResultTypes.push_back(N.getResult(I)->getType());
  }
  StepInfo Info{getResultNames(N), "reference." + N.getOpType().str(), true};
  std::vector<BufferId> R = Reads, W = Writes;
  R.erase(std::remove(R.begin(), R.end(), -1), R.end());
  W.erase(std::remove(W.begin(), W.end(), -1), W.end());
  const Node *NP = &N;
  L.addStep(Info, R, W, [=](Frame &Fr) {
    std::vector<Tensor> Ops(Reads.size());
    std::vector<const Tensor *> OpPtrs(Reads.size(), nullptr);
    for (size_t I = 0; I < Reads.size(); ++I) {
      if (Reads[I] < 0)
        continue;
      const TensorType &T = OperandTypes[I];
      Ops[I] = Tensor::copyOf(T.getElementType(), T.getStaticShape(),
                              T.getLayout(), Fr.bytes(Reads[I]));
      OpPtrs[I] = &Ops[I];
    }
    std::vector<Tensor> Res(Writes.size());
    for (size_t I = 0; I < Writes.size(); ++I)
      if (Writes[I] >= 0)
        Res[I] = Tensor::zeros(ResultTypes[I]);
    if (llvm::Error E = K(*NP, OpPtrs, Res)) {
      Fr.fail(llvm::toString(std::move(E)));
      return;
    }
    for (size_t I = 0; I < Writes.size(); ++I)
      if (Writes[I] >= 0)
        copyBytes(Fr.bytes(Writes[I]), Res[I].getBytes().data(),
                  Res[I].getBytes().size());
  });
  return llvm::Error::success();
}

llvm::Error checkTypes(const Graph &G) {
  auto Check = [&](const Value *V, const Node *N) -> llvm::Error {
    const TensorType &T = V->getType();
    if (T.hasStaticShape() && T.getElementType() != ElementType::Unknown)
      return llvm::Error::success();
    std::string Msg = "value '" + V->getName() + "' has type " + T.str() +
                      ": the CPU backend needs static shapes and known "
                      "element types (bind symbolic dims with --dim)";
    return N ? makeNodeError(*N, Msg) : makeGraphError(G, Msg);
  };
  // An op Strider does not know is the cause to name, not the unknown
  // types that follow from it.
  for (const Node *N : G.nodes())
    if (N->isOpaque())
      return makeNodeError(*N, "op '" + N->getOpType() +
                                   "' is not supported (no kernel in any "
                                   "backend)");
  for (const Value *In : G.getInputs())
    if (llvm::Error E = Check(In, nullptr))
      return E;
  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (N->hasResult(I))
        if (llvm::Error E = Check(N->getResult(I), N))
          return E;
  return llvm::Error::success();
}

} // namespace

bool cpu::hasLowering(OpId Id) {
  return Id != OpId::Opaque && getLowerTable()[size_t(Id)] != nullptr;
}

llvm::Expected<std::unique_ptr<Program>>
cpu::compileForCPU(const Graph &G, const CPUOptions &Opts) {
  if (llvm::Error E = checkTypes(G))
    return E;
  if (llvm::Error E =
          codegen::checkLargestTensor(G, Opts.MaxMemory, "activations"))
    return E;
  auto P = std::make_unique<ProgramImpl>();
  P->Threads = std::max(1, Opts.Threads);
  LoweringContext L(G, *P);
  L.setDerivedStore(Opts.Derived);

  std::vector<const Node *> Order(G.nodes().begin(), G.nodes().end());

  for (const Value *In : G.getInputs()) {
    if (In->getConstantData() && !In->hasUses())
      continue;
    ProgramImpl::Binding B;
    B.Name = In->getName();
    B.Type = In->getType();
    B.Buffer = L.defineBuffer(In);
    B.Default = In->getDefaultData();
    P->Inputs.push_back(B);
  }

  // Groups: the producer is lowered when its last node is reached.
  const LowerTable &Table = getLowerTable();
  codegen::FusionGroups Groups = codegen::findFusionGroups(
      G, Order,
      [&](const Node &N) { return bool(Table[size_t(N.getOpId())]); });
  const codegen::ProgramOrder Positions(G, Order, Groups);
  L.setOrder(&Positions);

  // A lowering function that declines adds nothing; the node then runs
  // its reference kernel.
  auto Lower = [&](const Node &N, const FusedTail &T) -> llvm::Error {
    LowerFn F = N.isOpaque() ? nullptr : Table[size_t(N.getOpId())];
    if (F && F(L, N, T))
      return llvm::Error::success();
    return makeNodeError(N, "declined by the CPU backend's kernels");
  };
  auto Fallback = [&](const Node &N, llvm::Error Why) {
    llvm::consumeError(std::move(Why));
    return addFallback(L, N);
  };
  if (llvm::Error E = codegen::lowerNodes(Order, Groups, Lower, Fallback))
    return E;

  for (const Value *Out : G.getOutputs()) {
    ProgramImpl::Binding B;
    B.Name = Out->getName();
    B.Type = Out->getType();
    B.Buffer = L.getBuffer(Out);
    P->Outputs.push_back(B);
  }

  codegen::ArenaPlan Plan =
      codegen::planBufferArena(P->Buffers, P->Steps, P->Inputs, P->Outputs, 64);
  P->Offsets = std::move(Plan.Offsets);
  P->ArenaBytes = Plan.ArenaBytes;
  // A vector's worth of slack: SIMD tails may read (never write) past the
  // end of the last buffer.
  P->ArenaAlloc = size_t((Plan.ArenaBytes + 64 + 63) / 64 * 64);
  // Runs take their arenas from the caller's pool (a session's: what
  // another program left there is never read, since kernels write every
  // element they read later), else from one of the program's own. One is
  // made now, so that a program whose arena cannot be had is an error here
  // and its first run finds it ready.
  std::string TooBig =
      checkMemoryBudget(uint64_t(P->ArenaAlloc), "activations", Opts.MaxMemory);
  if (!TooBig.empty())
    return codegen::makeTooBigError(G, TooBig);
  P->Arenas = Opts.Arena ? Opts.Arena : std::make_shared<ArenaPool>(0);
  uint8_t *First = P->Arenas->acquire(P->ArenaAlloc);
  if (!First)
    return makeGraphError(G, "cannot allocate the " +
                                 llvm::Twine(Plan.ArenaBytes) +
                                 "-byte activation arena");
  P->Arenas->release(First);
  return std::make_unique<Program>(std::move(P));
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

Program::Program(std::unique_ptr<ProgramImpl> Impl) : Impl(std::move(Impl)) {}
Program::~Program() = default;

llvm::ArrayRef<StepInfo> Program::getSteps() const { return Impl->Infos; }
void Program::setProfiling(bool On) {
  Impl->Profile = On;
  Impl->StepSeconds.assign(Impl->Steps.size(), 0.0);
  Impl->ProfiledRuns = 0;
}
llvm::ArrayRef<double> Program::getStepSeconds() const {
  return Impl->StepSeconds;
}
unsigned Program::getProfiledRuns() const { return Impl->ProfiledRuns; }
int64_t Program::getArenaBytes() const { return Impl->ArenaBytes; }
int64_t Program::getUnplannedBytes() const { return Impl->UnplannedBytes; }
int64_t Program::getConstantBytes() const { return Impl->ConstantBytes; }

std::string Program::getSimdTarget() {
  return hwy::TargetName(hwy::SupportedAndGeneratedTargets().front());
}

namespace {

/// An arena of a program's pool, held for one run.
class ArenaLease {
public:
  explicit ArenaLease(ProgramImpl &P)
      : Pool(*P.Arenas), Base(Pool.acquire(P.ArenaAlloc)) {}
  ~ArenaLease() {
    if (Base)
      Pool.release(Base);
  }
  ArenaLease(const ArenaLease &) = delete;
  ArenaLease &operator=(const ArenaLease &) = delete;
  uint8_t *get() const { return Base; }

private:
  ArenaPool &Pool;
  uint8_t *Base;
};

} // namespace

/// Takes an arena from \p P's pool for this run, copies \p Inputs into
/// it, runs \p P's steps there, and hands the frame to \p ReadOutputs
/// before the arena goes back.
static llvm::Error
runInArena(ProgramImpl &P, const TensorMap &Inputs,
           llvm::function_ref<void(const Frame &)> ReadOutputs) {
  ArenaLease Arena(P);
  if (!Arena.get())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot allocate a " +
                                       std::to_string(P.ArenaBytes) +
                                       "-byte activation arena for this run");
  Frame F(P, Arena.get());
  // The caller's tensors are read in place; a default or a relayout is
  // made here.
  std::vector<Tensor> Made;
  auto Bound = codegen::bindInputs(P.Inputs, Inputs, Made);
  if (!Bound)
    return Bound.takeError();
  for (size_t K = 0; K < P.Inputs.size(); ++K)
    copyBytes(F.bytes(P.Inputs[K].Buffer), (*Bound)[K]->getBytes().data(),
              (*Bound)[K]->getBytes().size());
  const bool Profile = P.Profile;
  std::vector<double> Seconds(Profile ? P.Steps.size() : 0, 0.0);
  for (size_t I = 0; I < P.Steps.size(); ++I) {
    auto Start = std::chrono::steady_clock::now();
    P.Steps[I].Run(F);
    if (Profile)
      Seconds[I] = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - Start)
                       .count();
    if (F.getError())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     *F.getError());
  }
  if (Profile) {
    std::lock_guard<std::mutex> Lock(P.ProfileM);
    P.StepSeconds.resize(P.Steps.size(), 0.0);
    for (size_t I = 0; I < Seconds.size(); ++I)
      P.StepSeconds[I] += Seconds[I];
    ++P.ProfiledRuns;
  }
  ReadOutputs(F);
  return llvm::Error::success();
}

llvm::Expected<TensorMap> Program::run(const TensorMap &Inputs) {
  ProgramImpl &P = *Impl;
  TensorMap Out;
  if (llvm::Error E = runInArena(P, Inputs, [&](const Frame &F) {
        for (const ProgramImpl::Binding &B : P.Outputs)
          Out[B.Name] =
              Tensor::copyOf(B.Type.getElementType(), B.Type.getStaticShape(),
                             B.Type.getLayout(), F.bytes(B.Buffer));
      }))
    return E;
  return Out;
}

llvm::Error Program::runInto(const TensorMap &Inputs, TensorMap &Outputs) {
  ProgramImpl &P = *Impl;
  for (const ProgramImpl::Binding &B : P.Outputs)
    if (llvm::Error E = runtime::checkOutput(
            Outputs, B.Name, B.Type.getElementType(), B.Type.getStaticShape()))
      return E;
  return runInArena(P, Inputs, [&](const Frame &F) {
    for (const ProgramImpl::Binding &B : P.Outputs) {
      Tensor &Dst = Outputs.find(B.Name)->second;
      if (Dst.getLayout() == B.Type.getLayout()) {
        copyBytes(Dst.getMutableBytes().data(), F.bytes(B.Buffer),
                  Dst.getBytes().size());
        continue;
      }
      Tensor T(B.Type.getElementType(), B.Type.getStaticShape(),
               B.Type.getLayout());
      copyBytes(T.getMutableBytes().data(), F.bytes(B.Buffer),
                T.getBytes().size());
      runtime::copyTensor(T, Dst);
    }
  });
}
