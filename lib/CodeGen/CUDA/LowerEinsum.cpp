//===- LowerEinsum.cpp - Einsum as copies, reductions and a GEMM ----------===//
//
// Einsum of one or two operands. Each operand is a strided view of its
// labels (strider/IR/Einsum.h binds them): a label repeated in an operand
// walks the diagonal (its dims' strides add up), a dim of 1 broadcast to a
// larger label is read with stride 0. f64 and integer Einsums are one
// typed Contract step (a thread per result element summing its products
// over the other labels). f32 ones:
//   - labels only one operand has (and not the result) are summed out
//     first: a copy to [kept..., summed...] and a row reduction;
//   - one operand: a strided copy into the result;
//   - two: the labels both operands and the result have are the batch,
//     those of one operand and the result the rows (M) or columns (N),
//     those of both operands only the sum (K); each operand is copied to
//     [batch, M, K] / [batch, K, N] unless it already is that dense
//     matrix, one batched cuBLASLt GEMM computes [batch, M, N], written
//     into the result directly when its layout is that order, else copied.
// A constant operand is arranged on the host and uploaded that way.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/Einsum.h"

#include "llvm/ADT/STLExtras.h"

using namespace strider;
using namespace strider::cuda;

namespace {

using Labels = llvm::SmallVector<unsigned, 6>;

/// An operand as the steps read it: a buffer, the element stride of each
/// label it has (by label number; Has says which), and, for a constant,
/// its data in logical order.
struct View {
  Arg Buffer;
  llvm::SmallVector<int64_t, 8> Stride;
  llvm::SmallVector<bool, 8> Has;
  std::vector<float> Constant;
};

class EinsumPlanner {
public:
  EinsumPlanner(PlanContext &C, const std::string &Nodes,
                llvm::ArrayRef<int64_t> Sizes)
      : C(C), Nodes(Nodes), Sizes(Sizes.begin(), Sizes.end()) {}

  int64_t volume(llvm::ArrayRef<unsigned> Order) const {
    int64_t V = 1;
    for (unsigned L : Order)
      V *= Sizes[L];
    return V;
  }

  /// Dense strides over \p Order (outermost first).
  llvm::SmallVector<int64_t, 6> denseStrides(llvm::ArrayRef<unsigned> Order) {
    llvm::SmallVector<int64_t, 6> S(Order.size(), 1);
    for (size_t I = Order.size(); I-- > 1;)
      S[I - 1] = S[I] * Sizes[Order[I]];
    return S;
  }

  /// A view dense over \p Order in buffer \p B.
  View dense(Arg B, llvm::ArrayRef<unsigned> Order) {
    View V;
    V.Buffer = B;
    V.Stride.assign(Sizes.size(), 0);
    V.Has.assign(Sizes.size(), false);
    auto S = denseStrides(Order);
    for (size_t I = 0; I < Order.size(); ++I) {
      V.Stride[Order[I]] = S[I];
      V.Has[Order[I]] = true;
    }
    return V;
  }

  /// Whether \p V is exactly the dense tensor over \p Order.
  bool isDenseIn(const View &V, llvm::ArrayRef<unsigned> Order) {
    if (!V.Constant.empty() || llvm::count(V.Has, true) != int(Order.size()))
      return false;
    auto S = denseStrides(Order);
    for (size_t I = 0; I < Order.size(); ++I)
      if (!V.Has[Order[I]] ||
          (Sizes[Order[I]] > 1 && V.Stride[Order[I]] != S[I]))
        return false;
    return true;
  }

  /// \p V arranged dense over \p Order: itself if it already is; a
  /// constant arranged here and uploaded; else a copy into scratch.
  View arrange(const View &V, llvm::ArrayRef<unsigned> Order,
               const char *What) {
    if (isDenseIn(V, Order))
      return V;
    const int64_t Count = volume(Order);
    if (!V.Constant.empty()) {
      std::vector<float> Data(static_cast<size_t>(Count), 0.0f);
      for (int64_t I = 0; I < Count; ++I)
        Data[size_t(I)] = V.Constant[size_t(sourceOffset(V, Order, I))];
      return dense({C.addConstantFloats(Data), 0}, Order);
    }
    const View To = dense({C.addScratch(Count * 4), 0}, Order);
    copy(V, To, Order, What);
    return To;
  }

  /// Y (over \p Order's labels) = X, through both views' strides.
  void copy(const View &X, const View &Y, llvm::ArrayRef<unsigned> Order,
            const char *What) {
    llvm::SmallVector<int64_t, 6> Shape, XS, YS;
    for (unsigned L : Order) {
      Shape.push_back(Sizes[L]);
      XS.push_back(X.Stride[L]);
      YS.push_back(Y.Stride[L]);
    }
    addCopy(C, Nodes, What, makeCopy(Shape, XS, YS, DType::F32, DType::F32),
            X.Buffer, Y.Buffer);
  }

  /// \p V with the labels of \p Summed added up: dense over \p Keep.
  View sum(const View &V, llvm::ArrayRef<unsigned> Keep,
           llvm::ArrayRef<unsigned> Summed) {
    Labels Order(Keep.begin(), Keep.end());
    Order.append(Summed.begin(), Summed.end());
    const View Arranged = arrange(V, Order, "einsum");
    ReduceParams P;
    P.Op = ReduceParams::Sum;
    P.Outer = volume(Keep);
    P.Reduced = volume(Summed);
    const View To = dense({C.addScratch(P.Outer * 4), 0}, Keep);
    C.addStep({Nodes, "reduce.sum.rows f32 (einsum)", false, 0}, P,
              {Arranged.Buffer, To.Buffer});
    return To;
  }

  /// Batched GEMM of \p A (dense [Batch, M, K]) and \p B (dense [Batch, K,
  /// N]) into \p Y (dense [Batch, M, N]).
  void gemm(const View &A, const View &B, const View &Y, int64_t Batch,
            int64_t M, int64_t N, int64_t K) {
    GemmDesc D;
    D.Batch = Batch;
    D.M = M;
    D.N = N;
    D.K = K;
    if (Batch > 1) {
      D.BatchStrideA = M * K;
      D.BatchStrideB = K * N;
      D.BatchStrideY = M * N;
    }
    D.Type = DType::F32;
    D.Math = C.getMathMode(DType::F32);
    StepInfo Info;
    Info.Nodes = Nodes;
    Info.Kernel = std::string("cublaslt.gemm nn f32") +
                  (D.Math == MathMode::TF32 ? " tf32" : "") +
                  (Batch > 1 ? " batch" + std::to_string(Batch) : "") +
                  " (einsum)";
    Info.Flops = 2 * Batch * M * N * K;
    C.addStep(Info, GemmStep{D, nullptr, nullptr},
              {A.Buffer, B.Buffer, Y.Buffer, Arg()});
  }

private:
  /// The element of \p V at dense index \p I over \p Order.
  int64_t sourceOffset(const View &V, llvm::ArrayRef<unsigned> Order,
                       int64_t I) {
    int64_t Off = 0;
    for (size_t D = Order.size(); D-- > 0;) {
      const int64_t Size = Sizes[Order[D]];
      Off += (I % Size) * V.Stride[Order[D]];
      I /= Size;
    }
    return Off;
  }

  PlanContext &C;
  std::string Nodes;
  llvm::SmallVector<int64_t, 8> Sizes;
};

} // namespace

namespace {

/// Einsum of integers or f64 (\p Type): one typed Contract step, a thread
/// per result element summing its products over the summed labels.
llvm::Error
planTypedEinsum(PlanContext &C, const Node &N, const FusedTail &T,
                ScalarType Type, const EinsumBinding &Bound,
                llvm::ArrayRef<int64_t> Sizes,
                llvm::ArrayRef<llvm::SmallVector<int64_t, 6>> Shapes) {
  const Value *Y = N.getResult(0);
  const TensorType &YT = Y->getType();
  const unsigned NumLabels = Bound.NumLabels;
  // Each operand's element stride per label (a diagonal's dims add up; a
  // dim of 1 broadcast to a larger label reads with stride 0).
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 2> Stride;
  llvm::SmallVector<Arg, 2> Args;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Value *V = N.getOperand(I);
    auto B = C.getBuffer(V, N);
    if (!B)
      return B.takeError();
    Args.push_back({*B, 0});
    Stride.emplace_back(NumLabels, 0);
    auto Str = codegen::getStrides(V->getType());
    const auto &Dims = Bound.Operands[I];
    for (size_t D = 0; D < Dims.size(); ++D)
      if (Shapes[I][D] != 1 || Sizes[Dims[D]] == 1)
        Stride[I][Dims[D]] += Str[D];
  }
  llvm::SmallVector<unsigned, 6> Summed;
  for (unsigned L = 0; L < NumLabels; ++L)
    if (!Bound.isInResult(L))
      Summed.push_back(L);
  if (YT.getRank() > unsigned(MaxRank) || Summed.size() > size_t(MaxRank))
    return unsupported(N, "an Einsum to " + YT.str() + " summing " +
                              llvm::Twine(Summed.size()) + " labels (" +
                              llvm::Twine(MaxRank) + " of each at most)");
  TypedParams P;
  P.Op = TypedOp::Contract;
  P.NumOperands = int(N.getNumOperands());
  P.In[0] = P.In[1] = P.Y = Type;
  // Y's dims in its physical order, each a result label.
  P.Rank = int(YT.getRank());
  unsigned K = 0;
  for (unsigned D : YT.getLayout().getPermutation(YT.getRank())) {
    const unsigned L = Bound.Result[D];
    P.Shape[K] = Sizes[L];
    for (unsigned I = 0; I < Stride.size(); ++I)
      P.Strides[I][K] = Stride[I][L];
    ++K;
  }
  P.SumRank = int(Summed.size());
  for (size_t S = 0; S < Summed.size(); ++S) {
    P.SumShape[S] = Sizes[Summed[S]];
    for (unsigned I = 0; I < Stride.size(); ++I)
      P.SumStrides[I][S] = Stride[I][Summed[S]];
  }
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  C.addStep({getStepNodes(N, T),
             std::string("typed.einsum ") + getScalarTypeName(Type), false, 0},
            P, {Args[0], Args.size() > 1 ? Args[1] : Arg(), Arg(), {*YB, 0}});
  return llvm::Error::success();
}

} // namespace

llvm::Error cuda::planEinsum(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *Y = N.getResult(0);
  auto Refuse = [&](const llvm::Twine &Why) {
    return unsupported(N, "an Einsum " + Why);
  };
  if (!T.Act.isNone() || T.Residual)
    return Refuse("with a fused epilogue");
  if (N.getNumOperands() < 1 || N.getNumOperands() > 2)
    return Refuse("of " + llvm::Twine(N.getNumOperands()) +
                  " operands (one or two)");
  // f32 through the GEMM below; f64 and integers through the typed
  // kernel; f16 and bf16 are refused.
  const ElementType Elt = Y->getType().getElementType();
  auto Typed = getScalarType(Elt);
  const bool Contract =
      Elt != ElementType::F32 && Typed && *Typed != ScalarType::F16 &&
      *Typed != ScalarType::BF16 && *Typed != ScalarType::Bool;
  llvm::SmallVector<unsigned, 2> Ranks;
  llvm::SmallVector<llvm::ArrayRef<int64_t>, 2> Shapes;
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 2> ShapeStore;
  for (const Value *V : N.getOperands()) {
    const TensorType &VT = V->getType();
    if ((VT.getElementType() != ElementType::F32 && !Contract) ||
        VT.getElementType() != Elt || !VT.hasStaticShape())
      return Refuse("of " + VT.str() +
                    " (static f32, f64 or integers, all of one type)");
    ShapeStore.push_back(VT.getStaticShape());
    Ranks.push_back(unsigned(VT.getRank()));
  }
  for (const auto &S : ShapeStore)
    Shapes.push_back(S);
  const TensorType &YT = Y->getType();
  if (!YT.hasStaticShape() || YT.getNumElements().getValueOr(0) == 0)
    return Refuse("to " + YT.str());
  auto Eq = parseEinsum(N.getStringAttr("equation", ""));
  if (!Eq)
    return Eq.takeError();
  auto Bound = bindEinsum(*Eq, Ranks);
  if (!Bound)
    return Bound.takeError();
  llvm::SmallVector<int64_t, 8> Sizes;
  if (llvm::Error E = resolveEinsumSizes(*Bound, Shapes, Sizes))
    return E;
  if (llvm::is_contained(Sizes, 0))
    return Refuse("with an empty dim");
  if (Contract)
    return planTypedEinsum(C, N, T, *Typed, *Bound, Sizes, ShapeStore);
  const unsigned NumLabels = Bound->NumLabels;

  EinsumPlanner P(C, getStepNodes(N, T), Sizes);
  // Each operand's view of its labels.
  llvm::SmallVector<View, 2> Views;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Value *V = N.getOperand(I);
    View W;
    W.Stride.assign(NumLabels, 0);
    W.Has.assign(NumLabels, false);
    auto Str = codegen::getStrides(V->getType());
    const auto &Dims = Bound->Operands[I];
    for (size_t D = 0; D < Dims.size(); ++D) {
      W.Has[Dims[D]] = true;
      if (ShapeStore[I][D] != 1 || Sizes[Dims[D]] == 1)
        W.Stride[Dims[D]] += Str[D];
    }
    if (V->getConstantData()) {
      W.Constant = getConstantFloats(V);
      // Logical row-major strides for the host copy.
      W.Stride.assign(NumLabels, 0);
      int64_t S = 1;
      for (size_t D = Dims.size(); D-- > 0;) {
        if (ShapeStore[I][D] != 1 || Sizes[Dims[D]] == 1)
          W.Stride[Dims[D]] += S;
        S *= ShapeStore[I][D];
      }
    } else {
      auto B = C.getBuffer(V, N);
      if (!B)
        return B.takeError();
      W.Buffer.Buffer = *B;
    }
    Views.push_back(std::move(W));
  }
  auto InResult = [&](unsigned L) { return Bound->isInResult(L); };
  // Sum out what only one operand has.
  for (size_t I = 0; I < Views.size(); ++I) {
    Labels Keep, Summed;
    for (unsigned L = 0; L < NumLabels; ++L) {
      if (!Views[I].Has[L])
        continue;
      const bool Other = Views.size() == 2 && Views[1 - I].Has[L];
      (InResult(L) || Other ? Keep : Summed).push_back(L);
    }
    if (!Summed.empty())
      Views[I] = P.sum(Views[I], Keep, Summed);
  }
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  View Out;
  Out.Buffer = {*YB, 0};
  Out.Stride.assign(NumLabels, 0);
  Out.Has.assign(NumLabels, false);
  auto YStr = codegen::getStrides(YT);
  for (size_t D = 0; D < Bound->Result.size(); ++D) {
    Out.Stride[Bound->Result[D]] = YStr[D];
    Out.Has[Bound->Result[D]] = true;
  }
  const Labels ResultOrder(Bound->Result.begin(), Bound->Result.end());
  if (Views.size() == 1) {
    const View &X = Views[0];
    if (!X.Constant.empty()) {
      // Folding should have done this; arrange it here all the same.
      const View Arranged = P.arrange(X, ResultOrder, "einsum");
      P.copy(Arranged, Out, ResultOrder, "einsum");
    } else {
      P.copy(X, Out, ResultOrder, "einsum");
    }
    return llvm::Error::success();
  }
  Labels Batch, M, Nn, K;
  for (unsigned L : ResultOrder) {
    const bool A = Views[0].Has[L], B = Views[1].Has[L];
    (A && B ? Batch : A ? M : Nn).push_back(L);
  }
  for (unsigned L = 0; L < NumLabels; ++L)
    if (!InResult(L) && Views[0].Has[L] && Views[1].Has[L])
      K.push_back(L);
  Labels AOrder = Batch, BOrder = Batch, YOrder = Batch;
  AOrder.append(M.begin(), M.end());
  AOrder.append(K.begin(), K.end());
  BOrder.append(K.begin(), K.end());
  BOrder.append(Nn.begin(), Nn.end());
  YOrder.append(M.begin(), M.end());
  YOrder.append(Nn.begin(), Nn.end());
  const View A = P.arrange(Views[0], AOrder, "einsum");
  const View B = P.arrange(Views[1], BOrder, "einsum");
  const bool Direct = P.isDenseIn(Out, YOrder);
  const View Product =
      Direct ? Out : P.dense({C.addScratch(P.volume(YOrder) * 4), 0}, YOrder);
  P.gemm(A, B, Product, P.volume(Batch), P.volume(M), P.volume(Nn),
         P.volume(K));
  if (!Direct)
    P.copy(Product, Out, ResultOrder, "einsum");
  return llvm::Error::success();
}
