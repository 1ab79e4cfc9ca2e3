//===- InferUtils.cpp - Helpers shared by the shape functions -------------===//
//
// Operand and attribute checks, element type unification, broadcasting,
// axis normalization, reading constant operands and checked dim arithmetic
// (the sliding-window formulas are in WindowGeometry.cpp).
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "strider/IR/TensorData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <iterator>

using namespace strider;
using namespace strider::detail;

TensorType detail::getLogicalType(const TensorType &T) {
  return T.hasRank() ? T.withLayout(Layout()) : T;
}

const TensorType *detail::getOperandType(const Node &N, unsigned I) {
  if (!N.hasOperand(I))
    return nullptr;
  return &N.getOperand(I)->getType();
}

llvm::Error detail::checkOperandPresent(const Node &N, unsigned I,
                                        llvm::StringRef Name) {
  if (N.hasOperand(I))
    return llvm::Error::success();
  return makeNodeError(N, "missing required operand '" + Name + "'");
}

llvm::Error detail::getRequiredOperands(const Node &N,
                                        llvm::ArrayRef<RequiredOperand> Ops) {
  for (const RequiredOperand &Op : Ops) {
    *Op.Type = getOperandType(N, Op.Index);
    if (!*Op.Type)
      return checkOperandPresent(N, Op.Index, Op.Name);
  }
  return llvm::Error::success();
}

llvm::Error detail::checkRank(const Node &N, const TensorType &T,
                              llvm::StringRef Name, unsigned Rank) {
  if (!T.hasRank() || T.getRank() == Rank)
    return llvm::Error::success();
  return makeNodeError(N, "input '" + Name + "' has rank " +
                              llvm::Twine(T.getRank()) + ", expected " +
                              llvm::Twine(Rank));
}

llvm::Error detail::checkMinRank(const Node &N, const TensorType &T,
                                 llvm::StringRef Name, unsigned MinRank) {
  if (!T.hasRank() || T.getRank() >= MinRank)
    return llvm::Error::success();
  return makeNodeError(N, "input '" + Name + "' has rank " +
                              llvm::Twine(T.getRank()) +
                              ", expected at least " + llvm::Twine(MinRank));
}

static bool isInClass(ElementType Ty, EltClass Class) {
  switch (Class) {
  case EltClass::Any:
    return true;
  case EltClass::Numeric:
    return Ty != ElementType::Bool;
  case EltClass::Float:
    return isFloatingPoint(Ty);
  case EltClass::Index:
    return Ty == ElementType::I32 || Ty == ElementType::I64;
  case EltClass::I64:
    return Ty == ElementType::I64;
  case EltClass::Bool:
    return Ty == ElementType::Bool;
  }
  llvm_unreachable("unknown element class");
}

static llvm::StringRef getClassName(EltClass Class) {
  // In enumerator order.
  static const char *const Names[] = {"any type",
                                      "a numeric type",
                                      "a floating-point type",
                                      "i32 or i64",
                                      "i64",
                                      "bool"};
  assert(size_t(Class) < std::size(Names) && "unknown element class");
  return Names[size_t(Class)];
}

llvm::Error detail::checkElementType(const Node &N, ElementType Ty,
                                     llvm::StringRef Name, EltClass Class) {
  if (Ty == ElementType::Unknown || isInClass(Ty, Class))
    return llvm::Error::success();
  return makeNodeError(N, "input '" + Name + "' has element type " +
                              getElementTypeName(Ty) + ", expected " +
                              getClassName(Class));
}

llvm::Error detail::unifyElementTypes(const Node &N, ElementType &Acc,
                                      ElementType Next) {
  if (Next == ElementType::Unknown || Next == Acc)
    return llvm::Error::success();
  if (Acc == ElementType::Unknown) {
    Acc = Next;
    return llvm::Error::success();
  }
  return makeNodeError(N, "element type mismatch: " + getElementTypeName(Acc) +
                              " vs " + getElementTypeName(Next));
}

//===----------------------------------------------------------------------===//
// Dims and broadcasting
//===----------------------------------------------------------------------===//

static std::string dimText(const Dim &D) {
  if (D.isStatic())
    return std::to_string(D.getSize());
  if (D.isSymbol())
    return D.getSymbol().str();
  return "?";
}

bool detail::mergeDims(const Dim &A, const Dim &B, Dim &Result) {
  if (A.isStatic() && B.isStatic() && A.getSize() != B.getSize())
    return false;
  if (A.isStatic())
    Result = A;
  else if (B.isStatic())
    Result = B;
  else if (A.isSymbol())
    Result = A;
  else
    Result = B;
  return true;
}

static bool isStaticOne(const Dim &D) {
  return D.isStatic() && D.getSize() == 1;
}

bool detail::broadcastDim(const Dim &A, const Dim &B, Dim &Result) {
  if (A == B || isStaticOne(B)) {
    Result = A;
    return true;
  }
  if (isStaticOne(A)) {
    Result = B;
    return true;
  }
  if (A.isStatic() && B.isStatic())
    return false;
  if (A.isStatic())
    Result = A;
  else if (B.isStatic())
    Result = B;
  else
    Result = Dim::getUnknown();
  return true;
}

llvm::Error detail::broadcastShapes(const Node &N, llvm::ArrayRef<Dim> A,
                                    llvm::ArrayRef<Dim> B, DimList &Result) {
  size_t Rank = std::max(A.size(), B.size());
  DimList Out(Rank);
  for (size_t I = 0; I < Rank; ++I) {
    // Right-aligned: a missing leading dim acts as 1.
    Dim One = Dim::getStatic(1);
    const Dim &DA = I + A.size() >= Rank ? A[I + A.size() - Rank] : One;
    const Dim &DB = I + B.size() >= Rank ? B[I + B.size() - Rank] : One;
    if (!broadcastDim(DA, DB, Out[I]))
      return makeNodeError(N, "operands of " + N.getOpType() +
                                  " are not broadcastable: " + dimText(DA) +
                                  " vs " + dimText(DB) + " at dim " +
                                  llvm::Twine(I));
  }
  Result = std::move(Out);
  return llvm::Error::success();
}

llvm::Error detail::broadcastTo(const Node &N, llvm::ArrayRef<Dim> From,
                                llvm::StringRef Name, DimList &To) {
  if (From.size() > To.size())
    return makeNodeError(
        N, "input '" + Name + "' of rank " + llvm::Twine(From.size()) +
               " is not broadcastable to rank " + llvm::Twine(To.size()));
  size_t Offset = To.size() - From.size();
  for (size_t I = 0; I < From.size(); ++I) {
    const Dim &F = From[I];
    Dim &T = To[Offset + I];
    if (isStaticOne(F) || F == T || !F.isStatic())
      continue;
    if (T.isStatic())
      return makeNodeError(
          N, "input '" + Name +
                 "' is not broadcastable to the result: " + dimText(F) +
                 " vs " + dimText(T) + " at dim " + llvm::Twine(Offset + I));
    // A static size other than 1 can only broadcast to itself.
    T = F;
  }
  return llvm::Error::success();
}

llvm::Expected<Dim> detail::multiplyDims(const Node &N,
                                         llvm::ArrayRef<Dim> Dims) {
  for (const Dim &D : Dims)
    if (D.isStatic() && D.getSize() == 0)
      return Dim::getStatic(0);
  int64_t Product = 1;
  const Dim *NonStatic = nullptr;
  unsigned NumNonStatic = 0;
  for (const Dim &D : Dims) {
    if (!D.isStatic()) {
      NonStatic = &D;
      ++NumNonStatic;
      continue;
    }
    if (llvm::MulOverflow(Product, D.getSize(), Product) ||
        Product > MaxDimSize)
      return makeNodeError(N, "product of dims exceeds 2^62");
  }
  if (NumNonStatic == 0)
    return Dim::getStatic(Product);
  if (NumNonStatic == 1 && Product == 1)
    return *NonStatic;
  return Dim::getUnknown();
}

llvm::Expected<Dim> detail::makeStaticDim(const Node &N, int64_t Size,
                                          const llvm::Twine &What) {
  if (Size < 0)
    return makeNodeError(N, What + " is " + llvm::Twine(Size) +
                                ", must be non-negative");
  if (Size > MaxDimSize)
    return makeNodeError(N, What + " exceeds 2^62");
  return Dim::getStatic(Size);
}

llvm::Expected<unsigned> detail::normalizeAxis(const Node &N, int64_t Axis,
                                               unsigned Rank,
                                               llvm::StringRef What) {
  int64_t R = Rank;
  if (Axis < -R || Axis >= R)
    return makeNodeError(N, What + " " + llvm::Twine(Axis) +
                                " is out of range for rank " +
                                llvm::Twine(Rank));
  return static_cast<unsigned>(Axis < 0 ? Axis + R : Axis);
}

llvm::Error detail::normalizeAxes(const Node &N, llvm::ArrayRef<int64_t> Axes,
                                  unsigned Rank, bool AllowDuplicates,
                                  llvm::SmallVectorImpl<unsigned> &Result,
                                  llvm::StringRef What) {
  Result.clear();
  for (int64_t A : Axes) {
    auto AxisOrErr = normalizeAxis(N, A, Rank, What);
    if (!AxisOrErr)
      return AxisOrErr.takeError();
    if (llvm::is_contained(Result, *AxisOrErr)) {
      if (AllowDuplicates)
        continue;
      return makeNodeError(N, "duplicate " + What + " " + llvm::Twine(A));
    }
    Result.push_back(*AxisOrErr);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Constant operands and attributes
//===----------------------------------------------------------------------===//

/// Common part of readIntList and readFloatList: presence, element type,
/// rank 1, static length; returns the constant data if there is any.
static llvm::Error readList(const Node &N, unsigned I, llvm::StringRef Name,
                            EltClass Class, ListOperand &Out,
                            const TensorData *&Data) {
  Out = ListOperand();
  Data = nullptr;
  const TensorType *T = getOperandType(N, I);
  if (!T)
    return llvm::Error::success();
  Out.Present = true;
  if (llvm::Error E = checkElementType(N, T->getElementType(), Name, Class))
    return E;
  if (llvm::Error E = checkRank(N, *T, Name, 1))
    return E;
  if (T->hasRank() && T->getDim(0).isStatic())
    Out.Length = T->getDim(0).getSize();
  Data = N.getOperand(I)->getConstantData();
  if (Data) {
    const TensorType &DT = Data->getType();
    if (llvm::Error E = checkElementType(N, DT.getElementType(), Name, Class))
      return E;
    if (llvm::Error E = checkRank(N, DT, Name, 1))
      return E;
    Out.Length = Data->getNumElements();
  }
  if (Out.Length && *Out.Length > MaxListLength)
    return makeNodeError(
        N, "input '" + Name + "' has " + llvm::Twine(*Out.Length) +
               " entries, more than " + llvm::Twine(MaxListLength));
  return llvm::Error::success();
}

llvm::Error detail::readIntList(const Node &N, unsigned I, llvm::StringRef Name,
                                EltClass Class, ListOperand &Out) {
  const TensorData *Data;
  if (llvm::Error E = readList(N, I, Name, Class, Out, Data))
    return E;
  if (Data) {
    std::vector<int64_t> V = Data->toInt64Vector();
    Out.Ints.emplace(V.begin(), V.end());
  }
  return llvm::Error::success();
}

llvm::Error detail::readFloatList(const Node &N, unsigned I,
                                  llvm::StringRef Name, ListOperand &Out) {
  const TensorData *Data;
  if (llvm::Error E = readList(N, I, Name, EltClass::Float, Out, Data))
    return E;
  if (Data) {
    std::vector<double> V = Data->toDoubleVector();
    Out.Floats.emplace(V.begin(), V.end());
  }
  return llvm::Error::success();
}

llvm::Error detail::checkScalarOperand(const Node &N, unsigned I,
                                       llvm::StringRef Name, EltClass Class,
                                       bool AllowSingleElement) {
  const TensorType *T = getOperandType(N, I);
  if (!T)
    return llvm::Error::success();
  if (llvm::Error E = checkElementType(N, T->getElementType(), Name, Class))
    return E;
  if (!T->hasRank() || T->getRank() == 0)
    return llvm::Error::success();
  if (AllowSingleElement && !llvm::any_of(T->getShape(), [](const Dim &D) {
        return D.isStatic() && D.getSize() != 1;
      }))
    return llvm::Error::success();
  return makeNodeError(N, "input '" + Name + "' must be a scalar, got " +
                              T->str());
}

llvm::Error detail::readIntsAttr(const Node &N, llvm::StringRef Name,
                                 unsigned Count, int64_t Default,
                                 int64_t MinValue,
                                 llvm::SmallVectorImpl<int64_t> &Result) {
  Result.clear();
  const Attribute *A = N.getAttr(Name);
  if (!A) {
    Result.assign(Count, Default);
    return llvm::Error::success();
  }
  if (A->getKind() != AttrKind::Ints)
    return makeNodeError(N, "attribute '" + Name + "' must be of kind ints");
  const std::vector<int64_t> &V = A->getInts();
  if (V.size() != Count)
    return makeNodeError(N, "attribute '" + Name + "' has " +
                                llvm::Twine(V.size()) + " entries, expected " +
                                llvm::Twine(Count));
  for (int64_t X : V) {
    if (X < MinValue)
      return makeNodeError(N, "attribute '" + Name + "' must be " +
                                  (MinValue > 0 ? "positive" : "non-negative") +
                                  ", got " + llvm::Twine(X));
    if (X > MaxDimSize)
      return makeNodeError(N, "attribute '" + Name + "' entry " +
                                  llvm::Twine(X) + " exceeds 2^62");
  }
  Result.assign(V.begin(), V.end());
  return llvm::Error::success();
}

llvm::Error detail::inferUnaryElementwise(const Node &N, ResultTypes &Results,
                                          EltClass Class) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  if (llvm::Error E = checkElementType(N, X->getElementType(), "X", Class))
    return E;
  Results.push_back(getLogicalType(*X));
  return llvm::Error::success();
}
