//===- TensorData.h - Constant tensor contents ------------------*- C++ -*-===//
//
// Immutable, shareable bytes of a constant tensor: initializers, Constant
// node values and tensor attributes. Data is stored densely in the physical
// order given by the type's layout, little-endian, with bool as one byte.
// The bytes are either owned or a view of memory kept alive by an owner
// object (e.g. a mapped weights file), so loading need not copy them.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_TENSORDATA_H
#define STRIDER_IR_TENSORDATA_H

#include "strider/IR/Types.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace strider {

/// \p D truncated toward zero to int64, saturated at the type's bounds (NaN
/// is 0): the conversion without the undefined behaviour of a plain cast
/// of an out-of-range double.
int64_t saturatingToInt64(double D);

class TensorData;
using TensorDataRef = std::shared_ptr<const TensorData>;

class TensorData {
public:
  /// Make constant data; \p Type must have a static shape and a known
  /// element type, and \p Bytes must hold exactly numElements * eltSize
  /// bytes (checked, returns an error otherwise).
  static llvm::Expected<TensorDataRef> create(const TensorType &Type,
                                              std::vector<uint8_t> Bytes);
  /// Make constant data that refers to \p Bytes without copying them; the
  /// data keeps \p Owner alive, which must keep \p Bytes valid and
  /// unchanged (e.g. a mapped file; null if \p Bytes outlive the data).
  /// Same checks as create(). No alignment is required, but kernels read
  /// aligned data faster: keep \p Bytes 64-byte aligned where possible.
  static llvm::Expected<TensorDataRef>
  createView(const TensorType &Type, llvm::ArrayRef<uint8_t> Bytes,
             std::shared_ptr<const void> Owner);
  /// Make data from int64 values converted to \p Elt (for shape-like
  /// constants built by the compiler).
  static TensorDataRef fromInt64(ElementType Elt,
                                 llvm::ArrayRef<int64_t> Shape,
                                 llvm::ArrayRef<int64_t> Values);
  /// Make an f32 tensor from values.
  static TensorDataRef fromFloat(llvm::ArrayRef<int64_t> Shape,
                                 llvm::ArrayRef<float> Values);

  const TensorType &getType() const { return Type; }
  ElementType getElementType() const { return Type.getElementType(); }
  int64_t getNumElements() const;
  /// The data (owned or viewed), numElements * eltSize bytes.
  llvm::ArrayRef<uint8_t> getBytes() const { return Bytes; }

  /// Element \p I (physical order) converted to int64 (floats truncate).
  int64_t getInt(int64_t I) const;
  /// Element \p I (physical order) converted to double.
  double getDouble(int64_t I) const;
  /// All elements converted to int64 (for shape/axes/pads operands).
  std::vector<int64_t> toInt64Vector() const;
  /// All elements converted to double.
  std::vector<double> toDoubleVector() const;
  /// True if every element has the same bytes.
  bool isSplat() const;
  /// The same logical tensor stored in layout \p L (a copy with its bytes
  /// permuted; shares nothing with this one). \p L must suit the rank.
  TensorDataRef withLayout(const Layout &L) const;

  bool operator==(const TensorData &O) const {
    return Type == O.Type && Bytes == O.Bytes;
  }
  /// A hash of the bytes (not the type), computed on first use and kept:
  /// the data never changes, and graphs cloned from one another share it,
  /// so passes that hash constants (CSE) pay for each constant once.
  /// Thread-safe.
  uint64_t getBytesHash() const;

  // Bytes may point into Owned: a copy would point into the original.
  TensorData(const TensorData &) = delete;
  TensorData &operator=(const TensorData &) = delete;

private:
  TensorData(TensorType Type, std::vector<uint8_t> OwnedBytes)
      : Type(std::move(Type)), Owned(std::move(OwnedBytes)), Bytes(Owned) {}
  TensorData(TensorType Type, llvm::ArrayRef<uint8_t> Viewed,
             std::shared_ptr<const void> Owner)
      : Type(std::move(Type)), Owner(std::move(Owner)), Bytes(Viewed) {}

  TensorType Type;
  /// The bytes of data made by create() and the like; empty for a view.
  std::vector<uint8_t> Owned;
  /// What keeps a view's bytes alive; null for owned data.
  std::shared_ptr<const void> Owner;
  /// The data: Owned's bytes or the viewed ones.
  llvm::ArrayRef<uint8_t> Bytes;
  /// getBytesHash's value; 0 until computed.
  mutable std::atomic<uint64_t> BytesHash{0};
};

/// The elements (\p EltSize bytes each) of a dense tensor of logical shape
/// \p Shape stored in physical order \p From (a permutation of its dims,
/// major to minor), rearranged into physical order \p To.
std::vector<uint8_t> permuteTensorBytes(llvm::ArrayRef<uint8_t> Src,
                                        llvm::ArrayRef<int64_t> Shape,
                                        llvm::ArrayRef<unsigned> From,
                                        llvm::ArrayRef<unsigned> To,
                                        size_t EltSize);

/// IEEE half and bfloat16 conversions (round to nearest even).
float halfToFloat(uint16_t H);
uint16_t floatToHalf(float F);
float bfloat16ToFloat(uint16_t B);
uint16_t floatToBfloat16(float F);

} // namespace strider

#endif // STRIDER_IR_TENSORDATA_H
