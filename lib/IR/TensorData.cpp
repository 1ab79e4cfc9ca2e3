//===- TensorData.cpp - Constant tensor contents --------------------------===//
//
// Creation and element access of constant data, plus fp16/bf16 conversion.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/TensorData.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/Twine.h"

#include <cassert>
#include <cstring>

using namespace strider;

/// Checks that \p Type can hold constant data of \p NumBytes bytes.
static llvm::Error checkDataType(const TensorType &Type, uint64_t NumBytes) {
  if (!Type.hasStaticShape())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "constant of type " + Type.str() +
                                       " must have a static shape");
  if (Type.getElementType() == ElementType::Unknown)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "constant has an unknown element type");
  uint64_t Expected = getElementByteSize(Type.getElementType());
  for (int64_t D : Type.getStaticShape()) {
    if (D != 0 && Expected > (uint64_t(1) << 62) / uint64_t(D))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "constant of type " + Type.str() +
                                         " is too large");
    Expected *= uint64_t(D);
  }
  if (Expected != NumBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "constant of type " + Type.str() + " needs " + llvm::Twine(Expected) +
            " bytes of data, got " + llvm::Twine(NumBytes));
  return llvm::Error::success();
}

llvm::Expected<TensorDataRef>
TensorData::create(const TensorType &Type, std::vector<uint8_t> Bytes) {
  if (llvm::Error E = checkDataType(Type, Bytes.size()))
    return E;
  return TensorDataRef(new TensorData(Type, std::move(Bytes)));
}

llvm::Expected<TensorDataRef>
TensorData::createView(const TensorType &Type, llvm::ArrayRef<uint8_t> Bytes,
                       std::shared_ptr<const void> Owner) {
  if (llvm::Error E = checkDataType(Type, Bytes.size()))
    return E;
  return TensorDataRef(new TensorData(Type, Bytes, std::move(Owner)));
}

template <typename T>
static void appendScalar(std::vector<uint8_t> &Bytes, T V) {
  uint8_t Buf[sizeof(T)];
  std::memcpy(Buf, &V, sizeof(T));
  Bytes.insert(Bytes.end(), Buf, Buf + sizeof(T));
}

int64_t strider::saturatingToInt64(double D) {
  if (!(D == D))
    return 0;
  if (D >= 9.2233720368547758e18)
    return INT64_MAX;
  if (D <= -9.2233720368547758e18)
    return INT64_MIN;
  return int64_t(D);
}

static void appendConverted(std::vector<uint8_t> &Bytes, ElementType Elt,
                            double V) {
  switch (Elt) {
  case ElementType::F32: return appendScalar<float>(Bytes, float(V));
  case ElementType::F64: return appendScalar<double>(Bytes, V);
  case ElementType::F16: return appendScalar<uint16_t>(Bytes, floatToHalf(float(V)));
  case ElementType::BF16:
    return appendScalar<uint16_t>(Bytes, floatToBfloat16(float(V)));
  case ElementType::I8: return appendScalar<int8_t>(Bytes, int8_t(V));
  case ElementType::U8: return appendScalar<uint8_t>(Bytes, uint8_t(V));
  case ElementType::I16: return appendScalar<int16_t>(Bytes, int16_t(V));
  case ElementType::U16: return appendScalar<uint16_t>(Bytes, uint16_t(V));
  case ElementType::I32: return appendScalar<int32_t>(Bytes, int32_t(V));
  case ElementType::U32: return appendScalar<uint32_t>(Bytes, uint32_t(V));
  case ElementType::I64: return appendScalar<int64_t>(Bytes, int64_t(V));
  case ElementType::U64: return appendScalar<uint64_t>(Bytes, uint64_t(V));
  case ElementType::Bool: return appendScalar<uint8_t>(Bytes, V != 0);
  case ElementType::Unknown: break;
  }
  assert(false && "unknown element type");
}

TensorDataRef TensorData::fromInt64(ElementType Elt,
                                    llvm::ArrayRef<int64_t> Shape,
                                    llvm::ArrayRef<int64_t> Values) {
  std::vector<uint8_t> Bytes;
  for (int64_t V : Values) {
    // Integers convert modulo 2^bits (well defined for unsigned targets);
    // only floating-point and bool go through double.
    switch (Elt) {
    case ElementType::I8: appendScalar<uint8_t>(Bytes, uint8_t(V)); break;
    case ElementType::U8: appendScalar<uint8_t>(Bytes, uint8_t(V)); break;
    case ElementType::I16: appendScalar<uint16_t>(Bytes, uint16_t(V)); break;
    case ElementType::U16: appendScalar<uint16_t>(Bytes, uint16_t(V)); break;
    case ElementType::I32: appendScalar<uint32_t>(Bytes, uint32_t(V)); break;
    case ElementType::U32: appendScalar<uint32_t>(Bytes, uint32_t(V)); break;
    case ElementType::I64: appendScalar<int64_t>(Bytes, V); break;
    case ElementType::U64: appendScalar<uint64_t>(Bytes, uint64_t(V)); break;
    default: appendConverted(Bytes, Elt, double(V)); break;
    }
  }
  auto D = create(TensorType::get(Elt, Shape), std::move(Bytes));
  assert(D && "fromInt64: values do not match the shape");
  return *D;
}

TensorDataRef TensorData::fromFloat(llvm::ArrayRef<int64_t> Shape,
                                    llvm::ArrayRef<float> Values) {
  std::vector<uint8_t> Bytes;
  for (float V : Values)
    appendScalar<float>(Bytes, V);
  auto D = create(TensorType::get(ElementType::F32, Shape), std::move(Bytes));
  assert(D && "fromFloat: values do not match the shape");
  return *D;
}

int64_t TensorData::getNumElements() const { return *Type.getNumElements(); }

template <typename T> static T loadAt(const uint8_t *P, int64_t I) {
  T V;
  std::memcpy(&V, P + I * sizeof(T), sizeof(T));
  return V;
}

double TensorData::getDouble(int64_t I) const {
  assert(I >= 0 && I < getNumElements() && "element index out of range");
  const uint8_t *P = Bytes.data();
  switch (getElementType()) {
  case ElementType::F32: return loadAt<float>(P, I);
  case ElementType::F64: return loadAt<double>(P, I);
  case ElementType::F16: return halfToFloat(loadAt<uint16_t>(P, I));
  case ElementType::BF16: return bfloat16ToFloat(loadAt<uint16_t>(P, I));
  case ElementType::I8: return loadAt<int8_t>(P, I);
  case ElementType::U8: return loadAt<uint8_t>(P, I);
  case ElementType::I16: return loadAt<int16_t>(P, I);
  case ElementType::U16: return loadAt<uint16_t>(P, I);
  case ElementType::I32: return loadAt<int32_t>(P, I);
  case ElementType::U32: return loadAt<uint32_t>(P, I);
  case ElementType::I64: return double(loadAt<int64_t>(P, I));
  case ElementType::U64: return double(loadAt<uint64_t>(P, I));
  case ElementType::Bool: return loadAt<uint8_t>(P, I) != 0;
  case ElementType::Unknown: break;
  }
  assert(false && "unknown element type");
  return 0;
}

int64_t TensorData::getInt(int64_t I) const {
  assert(I >= 0 && I < getNumElements() && "element index out of range");
  const uint8_t *P = Bytes.data();
  switch (getElementType()) {
  case ElementType::I64: return loadAt<int64_t>(P, I);
  case ElementType::U64: return int64_t(loadAt<uint64_t>(P, I));
  case ElementType::I32: return loadAt<int32_t>(P, I);
  default:
    return saturatingToInt64(getDouble(I));
  }
}

std::vector<int64_t> TensorData::toInt64Vector() const {
  std::vector<int64_t> R;
  int64_t N = getNumElements();
  R.reserve(N);
  for (int64_t I = 0; I < N; ++I)
    R.push_back(getInt(I));
  return R;
}

std::vector<double> TensorData::toDoubleVector() const {
  std::vector<double> R;
  int64_t N = getNumElements();
  R.reserve(N);
  for (int64_t I = 0; I < N; ++I)
    R.push_back(getDouble(I));
  return R;
}

bool TensorData::isSplat() const {
  unsigned Sz = getElementByteSize(getElementType());
  for (size_t Off = Sz; Off + Sz <= Bytes.size(); Off += Sz)
    if (std::memcmp(Bytes.data(), Bytes.data() + Off, Sz) != 0)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Half and bfloat16
//===----------------------------------------------------------------------===//

float strider::halfToFloat(uint16_t H) {
  uint32_t Sign = uint32_t(H & 0x8000) << 16;
  uint32_t Exp = (H >> 10) & 0x1f;
  uint32_t Mant = H & 0x3ff;
  uint32_t Bits;
  if (Exp == 0) {
    if (Mant == 0) {
      Bits = Sign;
    } else {
      // Subnormal: normalize.
      int E = -1;
      do {
        ++E;
        Mant <<= 1;
      } while (!(Mant & 0x400));
      Mant &= 0x3ff;
      Bits = Sign | uint32_t(127 - 15 - E) << 23 | Mant << 13;
    }
  } else if (Exp == 0x1f) {
    Bits = Sign | 0x7f800000u | Mant << 13;
  } else {
    Bits = Sign | (Exp + 127 - 15) << 23 | Mant << 13;
  }
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

uint16_t strider::floatToHalf(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  uint16_t Sign = uint16_t((Bits >> 16) & 0x8000);
  uint32_t Exp = (Bits >> 23) & 0xff;
  uint32_t Mant = Bits & 0x7fffff;
  if (Exp == 0xff) // Inf or NaN (keep NaN quiet and non-zero).
    return Sign | 0x7c00 | (Mant ? 0x200 | (Mant >> 13) : 0);
  int32_t E = int32_t(Exp) - 127 + 15;
  if (E >= 0x1f)
    return Sign | 0x7c00;
  if (E <= 0) {
    if (E < -10)
      return Sign;
    Mant |= 0x800000;
    uint32_t Shift = uint32_t(14 - E);
    uint32_t Half = Mant >> Shift;
    uint32_t Rem = Mant & ((1u << Shift) - 1);
    uint32_t Mid = 1u << (Shift - 1);
    if (Rem > Mid || (Rem == Mid && (Half & 1)))
      ++Half;
    return Sign | uint16_t(Half);
  }
  uint32_t Half = uint32_t(E) << 10 | (Mant >> 13);
  uint32_t Rem = Mant & 0x1fff;
  if (Rem > 0x1000 || (Rem == 0x1000 && (Half & 1)))
    ++Half; // May carry into the exponent, which rounds correctly to Inf.
  return Sign | uint16_t(Half);
}

float strider::bfloat16ToFloat(uint16_t B) {
  uint32_t Bits = uint32_t(B) << 16;
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

uint16_t strider::floatToBfloat16(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  if ((Bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN.
    return uint16_t((Bits >> 16) | 0x40);
  uint32_t Rounding = 0x7fff + ((Bits >> 16) & 1);
  return uint16_t((Bits + Rounding) >> 16);
}

std::vector<uint8_t> strider::permuteTensorBytes(llvm::ArrayRef<uint8_t> Src,
                                                 llvm::ArrayRef<int64_t> Shape,
                                                 llvm::ArrayRef<unsigned> From,
                                                 llvm::ArrayRef<unsigned> To,
                                                 size_t EltSize) {
  unsigned Rank = Shape.size();
  assert(From.size() == Rank && To.size() == Rank && "one order per dim");
  // Element stride of every logical dim in the source's physical order.
  llvm::SmallVector<int64_t, 6> SrcStride(Rank, 1);
  for (int I = int(Rank) - 2; I >= 0; --I)
    SrcStride[From[I]] = SrcStride[From[I + 1]] * Shape[From[I + 1]];
  std::vector<uint8_t> Out(Src.size());
  int64_t N = EltSize ? int64_t(Src.size() / EltSize) : 0;
  // Walk the destination in its physical order with an odometer over its
  // dims (minor dim last), tracking the source offset.
  llvm::SmallVector<int64_t, 6> Index(Rank, 0);
  int64_t S = 0;
  for (int64_t Dst = 0; Dst < N; ++Dst) {
    std::memcpy(&Out[Dst * EltSize], &Src[S * EltSize], EltSize);
    for (int P = int(Rank) - 1; P >= 0; --P) {
      unsigned D = To[P];
      if (++Index[D] < Shape[D]) {
        S += SrcStride[D];
        break;
      }
      S -= SrcStride[D] * (Shape[D] - 1);
      Index[D] = 0;
    }
  }
  return Out;
}

TensorDataRef TensorData::withLayout(const Layout &L) const {
  unsigned Rank = Type.getRank();
  assert(L.isValidForRank(Rank) && "layout of the wrong rank");
  std::vector<uint8_t> Out = permuteTensorBytes(
      Bytes, Type.getStaticShape(), Type.getLayout().getPermutation(Rank),
      L.getPermutation(Rank), getElementByteSize(Type.getElementType()));
  return TensorDataRef(new TensorData(Type.withLayout(L), std::move(Out)));
}

uint64_t TensorData::getBytesHash() const {
  uint64_t H = BytesHash.load(std::memory_order_relaxed);
  if (H)
    return H;
  H = uint64_t(llvm::hash_combine_range(Bytes.begin(), Bytes.end()));
  // 0 marks "not computed"; two threads racing store the same value.
  H = H ? H : 1;
  BytesHash.store(H, std::memory_order_relaxed);
  return H;
}
