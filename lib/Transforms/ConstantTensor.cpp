//===- ConstantTensor.cpp - Constant data for folding passes --------------===//
//
// Constant lookup, layout conversion and element encoding of constant data.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"

#include "strider/IR/Graph.h"

#include <cassert>
#include <cstring>

using namespace strider;
using namespace strider::folding;

TensorDataRef folding::getConstantDataRef(const Value *V) {
  return V ? V->getConstantDataRef() : nullptr;
}

TensorDataRef folding::toLogicalOrder(const TensorDataRef &D) {
  if (D->getType().getLayout().isIdentity())
    return D;
  return D->withLayout(Layout());
}

TensorDataRef folding::toPhysicalOrder(const TensorDataRef &D,
                                       const Layout &L) {
  assert(D->getType().getLayout().isIdentity() &&
         "expected logical-order data");
  if (L.isIdentity())
    return D;
  return D->withLayout(L);
}

template <typename T> static void storeAs(uint8_t *Out, T V) {
  std::memcpy(Out, &V, sizeof(T));
}

void folding::storeFloat(ElementType Elt, double V, uint8_t *Out) {
  switch (Elt) {
  case ElementType::F32:
    return storeAs<float>(Out, float(V));
  case ElementType::F64:
    return storeAs<double>(Out, V);
  case ElementType::F16:
    return storeAs<uint16_t>(Out, floatToHalf(float(V)));
  case ElementType::BF16:
    return storeAs<uint16_t>(Out, floatToBfloat16(float(V)));
  default:
    break;
  }
  assert(false && "storeFloat needs a floating-point element type");
}

llvm::Optional<std::vector<double>>
folding::readBroadcastPerChannel(const Value *V, unsigned Rank, int64_t Size) {
  TensorDataRef D = getConstantDataRef(V);
  if (!D || !isFloatingPoint(D->getElementType()))
    return llvm::None;
  llvm::SmallVector<int64_t, 6> Shape = D->getType().getStaticShape();
  if (Shape.size() > Rank)
    return llvm::None;
  const int64_t N = D->getNumElements();
  // Aligned on the right, dim I of the constant is dim Rank - size + I.
  for (unsigned I = 0; I < Shape.size(); ++I) {
    const bool ChannelDim = Rank - Shape.size() + I == 1;
    if (Shape[I] != 1 && !(ChannelDim && Shape[I] == Size))
      return llvm::None;
  }
  D = toLogicalOrder(D);
  std::vector<double> Out(static_cast<size_t>(Size));
  for (int64_t C = 0; C < Size; ++C)
    Out[size_t(C)] = D->getDouble(N == 1 ? 0 : C);
  return Out;
}

void folding::storeInt(ElementType Elt, int64_t V, uint8_t *Out) {
  // Through the unsigned type of the same width: wraps without undefined
  // behaviour.
  switch (Elt) {
  case ElementType::I8:
  case ElementType::U8:
    return storeAs<uint8_t>(Out, uint8_t(V));
  case ElementType::I16:
  case ElementType::U16:
    return storeAs<uint16_t>(Out, uint16_t(V));
  case ElementType::I32:
  case ElementType::U32:
    return storeAs<uint32_t>(Out, uint32_t(V));
  case ElementType::I64:
  case ElementType::U64:
    return storeAs<uint64_t>(Out, uint64_t(V));
  case ElementType::Bool:
    return storeAs<uint8_t>(Out, V != 0);
  default:
    break;
  }
  assert(false && "storeInt needs an integer or bool element type");
}
