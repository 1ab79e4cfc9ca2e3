//===- Tensor.h - Runtime tensors in any physical layout --------*- C++ -*-===//
//
// A dense tensor with a static logical shape (ONNX semantics) and a
// physical layout: its bytes lie in the layout's physical order, and every
// access goes through per-logical-dim strides. The reference interpreter
// reads and writes tensors this way, so an NHWC conv or a channels-last
// concat runs as such.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_TENSOR_H
#define STRIDER_RUNTIME_TENSOR_H

#include "strider/IR/TensorData.h"
#include "strider/IR/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace strider {
namespace runtime {

class Tensor {
public:
  /// An empty tensor (rank 0, no element type).
  Tensor() = default;
  /// A zero-filled tensor of logical shape \p Shape stored in layout \p L.
  Tensor(ElementType Elt, llvm::ArrayRef<int64_t> Shape, Layout L = Layout());
  /// A zero-filled tensor of static type \p T (asserts a static shape and a
  /// known element type).
  static Tensor zeros(const TensorType &T);
  /// The contents of constant data, in its layout.
  static Tensor fromData(const TensorData &D);
  /// A tensor of its own holding a copy of the bytes at \p Data (its
  /// elements in \p L's physical order), written once (not zeroed first).
  static Tensor copyOf(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                       const Layout &L, const uint8_t *Data);
  /// A tensor over bytes the caller owns, in layout \p L's physical order,
  /// without copying them: how a caller's buffers reach a run (the C API's
  /// host tensors). \p Data must outlive the view and every tensor moved
  /// from it; copying a view copies the bytes into a tensor of its own.
  static Tensor view(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                     const Layout &L, uint8_t *Data);

  Tensor(const Tensor &Other);
  Tensor &operator=(const Tensor &Other);
  Tensor(Tensor &&) = default;
  Tensor &operator=(Tensor &&) = default;
  ~Tensor() = default;

  /// Whether this tensor's bytes belong to someone else (view()).
  bool isView() const { return View != nullptr; }

  ElementType getElementType() const { return Elt; }
  unsigned getRank() const { return Shape.size(); }
  llvm::ArrayRef<int64_t> getShape() const { return Shape; }
  int64_t getDim(unsigned I) const { return Shape[I]; }
  const Layout &getLayout() const { return L; }
  int64_t getNumElements() const { return NumElements; }
  /// The static type of this tensor (shape, element type, layout).
  TensorType getType() const;

  /// Element stride of each logical dim (in elements).
  llvm::ArrayRef<int64_t> getStrides() const { return Strides; }
  /// Element offset of logical index \p Index (one entry per dim).
  int64_t getOffset(llvm::ArrayRef<int64_t> Index) const;

  /// Element at offset \p Off converted to double / int64 (floats
  /// truncate toward zero; bool is 0 or 1).
  double getDouble(int64_t Off) const;
  int64_t getInt(int64_t Off) const;
  /// Store \p V at offset \p Off converted to the element type (rounding to
  /// nearest for f16/bf16, truncating for integers, != 0 for bool).
  void setDouble(int64_t Off, double V);
  void setInt(int64_t Off, int64_t V);
  /// Copy the element at offset \p SrcOff of \p Src (same element type,
  /// asserted) to offset \p DstOff of this tensor, bit for bit.
  void copyElement(int64_t DstOff, const Tensor &Src, int64_t SrcOff);

  /// Raw bytes, in physical order.
  llvm::ArrayRef<uint8_t> getBytes() const {
    if (View)
      return llvm::ArrayRef<uint8_t>(View, getByteSize());
    return Bytes;
  }
  llvm::MutableArrayRef<uint8_t> getMutableBytes() {
    if (View)
      return llvm::MutableArrayRef<uint8_t>(View, getByteSize());
    return Bytes;
  }

  /// The same logical tensor stored in layout \p NewL.
  Tensor withLayout(const Layout &NewL) const;
  /// As constant data (same layout).
  TensorDataRef toData() const;

private:
  /// Shape, layout and strides, with no bytes.
  Tensor(ElementType Elt, llvm::ArrayRef<int64_t> Shape, Layout L,
         bool Allocate);
  size_t getByteSize() const {
    return size_t(NumElements) * getElementByteSize(Elt);
  }
  uint8_t *data() { return View ? View : Bytes.data(); }
  const uint8_t *data() const { return View ? View : Bytes.data(); }

  ElementType Elt = ElementType::Unknown;
  llvm::SmallVector<int64_t, 6> Shape;
  Layout L;
  llvm::SmallVector<int64_t, 6> Strides;
  int64_t NumElements = 1;
  std::vector<uint8_t> Bytes;
  /// The caller's bytes of a view; null when Bytes holds them.
  uint8_t *View = nullptr;
};

/// Copies \p Src's elements into \p Dst (same element type and logical
/// shape, asserted), converting between their layouts.
void copyTensor(const Tensor &Src, Tensor &Dst);

/// A view (Tensor::view) of \p T's bytes, for passing it on without a
/// copy; \p T must outlive it and its bytes are not written through it.
Tensor viewOf(const Tensor &T);

/// Strides for reading \p T as if broadcast (numpy rules: dims aligned on
/// the right, size-1 dims repeated) to \p OutShape: one entry per dim of
/// \p OutShape, 0 where \p T is broadcast. Asserts broadcastability.
llvm::SmallVector<int64_t, 6>
getBroadcastStrides(const Tensor &T, llvm::ArrayRef<int64_t> OutShape);

/// Calls \p F with every logical index of \p Shape in row-major order
/// (the last dim fastest). An empty shape visits one (scalar) index.
template <typename Fn>
void forEachIndex(llvm::ArrayRef<int64_t> Shape, Fn F) {
  for (int64_t D : Shape)
    if (D == 0)
      return;
  llvm::SmallVector<int64_t, 6> Index(Shape.size(), 0);
  while (true) {
    F(llvm::ArrayRef<int64_t>(Index));
    int I = int(Shape.size()) - 1;
    for (; I >= 0; --I) {
      if (++Index[I] < Shape[I])
        break;
      Index[I] = 0;
    }
    if (I < 0)
      return;
  }
}

} // namespace runtime
} // namespace strider

#endif // STRIDER_RUNTIME_TENSOR_H
