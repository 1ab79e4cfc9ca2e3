//===- Tensor.cpp - Runtime tensors in any physical layout ----------------===//
//
// Strides from layouts, typed element access converting through double or
// int64, and conversions to and from constant data.
//
//===----------------------------------------------------------------------===//

#include "strider/Runtime/Tensor.h"
#include "strider/Runtime/Reference.h"

#include <cassert>
#include <cmath>
#include <cstring>

using namespace strider;
using namespace strider::runtime;

namespace {

template <typename T> T loadAt(const uint8_t *Bytes, int64_t Off) {
  T V;
  std::memcpy(&V, Bytes + Off * sizeof(T), sizeof(T));
  return V;
}

template <typename T> void storeAt(uint8_t *Bytes, int64_t Off, T V) {
  std::memcpy(Bytes + Off * sizeof(T), &V, sizeof(T));
}

/// Truncates \p D toward zero into int64, saturating out-of-range values
/// and mapping NaN to 0 (no undefined behaviour on any input).
int64_t truncateToInt64(double D) {
  if (std::isnan(D))
    return 0;
  if (D >= 9223372036854775807.0)
    return INT64_MAX;
  if (D <= -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(D);
}

} // namespace

Tensor::Tensor(ElementType Elt, llvm::ArrayRef<int64_t> Shape, Layout L)
    : Tensor(Elt, Shape, std::move(L), /*Allocate=*/true) {}

Tensor::Tensor(ElementType Elt, llvm::ArrayRef<int64_t> Shape, Layout L,
               bool Allocate)
    : Elt(Elt), Shape(Shape.begin(), Shape.end()), L(std::move(L)) {
  unsigned Rank = Shape.size();
  assert(this->L.isValidForRank(Rank) && "layout does not suit the rank");
  Strides.assign(Rank, 0);
  llvm::SmallVector<unsigned, 6> Perm = this->L.getPermutation(Rank);
  int64_t Stride = 1;
  for (unsigned P = Rank; P-- > 0;) {
    Strides[Perm[P]] = Stride;
    Stride *= Shape[Perm[P]];
  }
  NumElements = 1;
  for (int64_t D : Shape) {
    assert(D >= 0 && "negative dim");
    NumElements *= D;
  }
  if (Allocate)
    Bytes.assign(getByteSize(), 0);
}

Tensor Tensor::view(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                    const Layout &L, uint8_t *Data) {
  Tensor R(Elt, Shape, L, /*Allocate=*/false);
  R.View = Data;
  // A view of no bytes is an empty tensor of its own.
  if (!R.getByteSize())
    R.View = nullptr;
  return R;
}

Tensor::Tensor(const Tensor &Other)
    : Elt(Other.Elt), Shape(Other.Shape), L(Other.L), Strides(Other.Strides),
      NumElements(Other.NumElements) {
  llvm::ArrayRef<uint8_t> B = Other.getBytes();
  Bytes.assign(B.begin(), B.end());
}

Tensor &Tensor::operator=(const Tensor &Other) {
  if (this != &Other)
    *this = Tensor(Other);
  return *this;
}

Tensor Tensor::zeros(const TensorType &T) {
  assert(T.hasStaticShape() && T.getElementType() != ElementType::Unknown &&
         "tensor needs a static shape and a known element type");
  return Tensor(T.getElementType(), T.getStaticShape(), T.getLayout());
}

Tensor Tensor::copyOf(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                      const Layout &L, const uint8_t *Data) {
  Tensor R(Elt, Shape, L, /*Allocate=*/false);
  R.Bytes.assign(Data, Data + R.getByteSize());
  return R;
}

Tensor Tensor::fromData(const TensorData &D) {
  const TensorType &T = D.getType();
  assert(T.hasStaticShape() && T.getElementType() != ElementType::Unknown &&
         "tensor needs a static shape and a known element type");
  Tensor R = copyOf(T.getElementType(), T.getStaticShape(), T.getLayout(),
                    D.getBytes().data());
  assert(R.Bytes.size() == D.getBytes().size() && "data size mismatch");
  return R;
}

TensorType Tensor::getType() const { return TensorType::get(Elt, Shape, L); }

int64_t Tensor::getOffset(llvm::ArrayRef<int64_t> Index) const {
  assert(Index.size() == Shape.size() && "index rank mismatch");
  int64_t Off = 0;
  for (unsigned I = 0, E = Index.size(); I != E; ++I) {
    assert(Index[I] >= 0 && Index[I] < Shape[I] && "index out of range");
    Off += Index[I] * Strides[I];
  }
  return Off;
}

/// Call \p F with a zero of the C++ type of an integer (not bool) element
/// type \p Elt; false, without calling it, for the other types.
template <typename Fn> static bool withIntegerType(ElementType Elt, Fn &&F) {
  switch (Elt) {
  case ElementType::I8:
    F(int8_t());
    return true;
  case ElementType::U8:
    F(uint8_t());
    return true;
  case ElementType::I16:
    F(int16_t());
    return true;
  case ElementType::U16:
    F(uint16_t());
    return true;
  case ElementType::I32:
    F(int32_t());
    return true;
  case ElementType::U32:
    F(uint32_t());
    return true;
  case ElementType::I64:
    F(int64_t());
    return true;
  case ElementType::U64:
    F(uint64_t());
    return true;
  default:
    return false;
  }
}

double Tensor::getDouble(int64_t Off) const {
  assert(Off >= 0 && Off < NumElements && "offset out of range");
  double R = 0;
  if (withIntegerType(Elt, [&](auto Zero) {
        R = double(loadAt<decltype(Zero)>(data(), Off));
      }))
    return R;
  switch (Elt) {
  case ElementType::F32:
    return loadAt<float>(data(), Off);
  case ElementType::F64:
    return loadAt<double>(data(), Off);
  case ElementType::F16:
    return halfToFloat(loadAt<uint16_t>(data(), Off));
  case ElementType::BF16:
    return bfloat16ToFloat(loadAt<uint16_t>(data(), Off));
  case ElementType::Bool:
    return loadAt<uint8_t>(data(), Off) != 0;
  default:
    break;
  }
  llvm_unreachable("tensor of unknown element type");
}

int64_t Tensor::getInt(int64_t Off) const {
  assert(Off >= 0 && Off < NumElements && "offset out of range");
  int64_t R = 0;
  if (withIntegerType(Elt, [&](auto Zero) {
        R = int64_t(loadAt<decltype(Zero)>(data(), Off));
      }))
    return R;
  if (Elt == ElementType::Bool)
    return loadAt<uint8_t>(data(), Off) != 0;
  assert(isFloatingPoint(Elt) && "tensor of unknown element type");
  return truncateToInt64(getDouble(Off));
}

void Tensor::setDouble(int64_t Off, double V) {
  assert(Off >= 0 && Off < NumElements && "offset out of range");
  switch (Elt) {
  case ElementType::F32:
    return storeAt<float>(data(), Off, float(V));
  case ElementType::F64:
    return storeAt<double>(data(), Off, V);
  case ElementType::F16:
    return storeAt<uint16_t>(data(), Off, floatToHalf(float(V)));
  case ElementType::BF16:
    return storeAt<uint16_t>(data(), Off, floatToBfloat16(float(V)));
  case ElementType::Bool:
    return storeAt<uint8_t>(data(), Off, V != 0);
  case ElementType::U64:
    // Values past INT64_MAX still fit an unsigned 64-bit element.
    if (V >= 9223372036854775808.0 && V < 18446744073709551616.0)
      return storeAt<uint64_t>(data(), Off, static_cast<uint64_t>(V));
    return setInt(Off, truncateToInt64(V));
  case ElementType::I8:
  case ElementType::U8:
  case ElementType::I16:
  case ElementType::U16:
  case ElementType::I32:
  case ElementType::U32:
  case ElementType::I64:
    return setInt(Off, truncateToInt64(V));
  case ElementType::Unknown:
    break;
  }
  llvm_unreachable("tensor of unknown element type");
}

void Tensor::setInt(int64_t Off, int64_t V) {
  assert(Off >= 0 && Off < NumElements && "offset out of range");
  // Narrowing integer stores wrap (two's complement), as C++ casts do.
  if (withIntegerType(Elt, [&](auto Zero) {
        using T = decltype(Zero);
        storeAt<T>(data(), Off, T(V));
      }))
    return;
  if (Elt == ElementType::Bool)
    return storeAt<uint8_t>(data(), Off, V != 0);
  assert(isFloatingPoint(Elt) && "tensor of unknown element type");
  setDouble(Off, double(V));
}

void Tensor::copyElement(int64_t DstOff, const Tensor &Src, int64_t SrcOff) {
  assert(Src.Elt == Elt && "copyElement needs equal element types");
  assert(DstOff >= 0 && DstOff < NumElements && SrcOff >= 0 &&
         SrcOff < Src.NumElements && "offset out of range");
  size_t Size = getElementByteSize(Elt);
  std::memcpy(data() + DstOff * Size, Src.data() + SrcOff * Size, Size);
}

Tensor Tensor::withLayout(const Layout &NewL) const {
  unsigned Rank = getRank();
  assert(NewL.isValidForRank(Rank) && "layout does not suit the rank");
  if (NewL == L)
    return copyOf(Elt, Shape, L, getBytes().data());
  Tensor R(Elt, Shape, NewL, /*Allocate=*/false);
  R.Bytes =
      permuteTensorBytes(getBytes(), Shape, L.getPermutation(Rank),
                         NewL.getPermutation(Rank), getElementByteSize(Elt));
  return R;
}

TensorDataRef Tensor::toData() const {
  llvm::Expected<TensorDataRef> D = TensorData::create(getType(), getBytes());
  // The type is static and the byte count matches by construction.
  if (!D) {
    llvm::consumeError(D.takeError());
    llvm_unreachable("tensor bytes do not match its type");
  }
  return std::move(*D);
}

void runtime::copyTensor(const Tensor &Src, Tensor &Dst) {
  assert(Src.getElementType() == Dst.getElementType() &&
         Src.getShape() == Dst.getShape() && "copyTensor needs equal types");
  if (Src.getLayout() == Dst.getLayout()) {
    llvm::ArrayRef<uint8_t> B = Src.getBytes();
    if (!B.empty())
      std::memcpy(Dst.getMutableBytes().data(), B.data(), B.size());
    return;
  }
  Tensor Laid = Src.withLayout(Dst.getLayout());
  llvm::ArrayRef<uint8_t> B = Laid.getBytes();
  if (!B.empty())
    std::memcpy(Dst.getMutableBytes().data(), B.data(), B.size());
}

llvm::Error runtime::checkOutput(const TensorMap &Outputs,
                                 const std::string &Name, ElementType Elt,
                                 llvm::ArrayRef<int64_t> Shape) {
  auto It = Outputs.find(Name);
  if (It == Outputs.end())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "missing output '" + Name + "'");
  if (It->second.getElementType() != Elt || It->second.getShape() != Shape)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "output '" + Name + "' has type " +
            TensorType::get(It->second.getElementType(), It->second.getShape())
                .str() +
            ", expected " + TensorType::get(Elt, Shape).str());
  return llvm::Error::success();
}

Tensor runtime::viewOf(const Tensor &T) {
  return Tensor::view(T.getElementType(), T.getShape(), T.getLayout(),
                      const_cast<uint8_t *>(T.getBytes().data()));
}

llvm::SmallVector<int64_t, 6>
runtime::getBroadcastStrides(const Tensor &T,
                             llvm::ArrayRef<int64_t> OutShape) {
  unsigned Rank = T.getRank(), OutRank = OutShape.size();
  assert(Rank <= OutRank && "operand rank exceeds the broadcast rank");
  llvm::SmallVector<int64_t, 6> Strides(OutRank, 0);
  for (unsigned I = 0; I != Rank; ++I) {
    unsigned O = OutRank - Rank + I;
    assert((T.getDim(I) == OutShape[O] || T.getDim(I) == 1) &&
           "shapes are not broadcastable");
    if (T.getDim(I) != 1)
      Strides[O] = T.getStrides()[I];
  }
  return Strides;
}
