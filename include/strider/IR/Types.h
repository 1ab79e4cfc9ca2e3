//===- Types.h - Element types, dims, layouts and tensor types -*- C++ -*-===//
//
// A tensor type is a logical shape (ONNX semantics) plus a physical layout:
// the order in which the logical dims are laid out in memory, major to
// minor. See docs/LangRef.md for the textual form.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_TYPES_H
#define STRIDER_IR_TYPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace strider {

/// Element types of tensors. `Unknown` is only allowed on values whose type
/// nothing could infer (results of opaque ops without value_info).
enum class ElementType : uint8_t {
  Unknown,
  F32,
  F16,
  BF16,
  F64,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  Bool,
};

/// Size in bytes of one element; 0 for Unknown.
unsigned getElementByteSize(ElementType Ty);

/// The most bytes a tensor may hold: 2^62, so that byte sizes, element
/// counts and the sums of a program's buffers stay within int64_t.
constexpr int64_t MaxTensorBytes = int64_t(1) << 62;
/// Textual name used by the IR (`f32`, `i64`, `bool`, ...); `?` for Unknown.
llvm::StringRef getElementTypeName(ElementType Ty);
/// Inverse of getElementTypeName; None for anything else.
llvm::Optional<ElementType> parseElementTypeName(llvm::StringRef Name);
/// ONNX TensorProto::DataType enum value of a type (0 for Unknown).
int32_t toOnnxDataType(ElementType Ty);
/// ElementType of an ONNX TensorProto::DataType value, None if unsupported.
llvm::Optional<ElementType> fromOnnxDataType(int32_t DataType);
bool isFloatingPoint(ElementType Ty);
bool isSignedInteger(ElementType Ty);
bool isUnsignedInteger(ElementType Ty);
inline bool isInteger(ElementType Ty) {
  return isSignedInteger(Ty) || isUnsignedInteger(Ty);
}

/// One logical dimension: a static size, a named symbol (`N`), or unknown.
/// Trivially copyable: a symbol's name is interned once per process (the
/// names stay until it exits), so copying shapes allocates nothing and two
/// dims of the same symbol hold the same characters.
class Dim {
public:
  /// An unknown dimension (`?`).
  Dim() = default;
  /// A static dimension; \p Size must be >= 0.
  static Dim getStatic(int64_t Size);
  /// A symbolic dimension; an empty name means unknown.
  static Dim getSymbol(llvm::StringRef Name);
  static Dim getUnknown() { return Dim(); }

  bool isStatic() const { return Size >= 0; }
  bool isSymbol() const { return Size < 0 && !Symbol.empty(); }
  bool isUnknown() const { return Size < 0 && Symbol.empty(); }
  /// Size of a static dim; asserts isStatic().
  int64_t getSize() const;
  llvm::StringRef getSymbol() const { return Symbol; }

  bool operator==(const Dim &O) const {
    // Interned: equal names are the same characters.
    return Size == O.Size && Symbol.data() == O.Symbol.data() &&
           Symbol.size() == O.Symbol.size();
  }
  bool operator!=(const Dim &O) const { return !(*this == O); }

private:
  int64_t Size = -1;
  llvm::StringRef Symbol;
};

/// A physical layout: Perm[i] is the logical dim stored at physical
/// position i (major to minor). An empty Layout is the identity for any
/// rank, so `nchw` and "no layout" are the same thing.
class Layout {
public:
  Layout() = default;
  /// Build from a permutation; an identity permutation yields the empty
  /// (canonical) layout. Asserts that \p Perm is a permutation.
  explicit Layout(llvm::ArrayRef<unsigned> Perm);

  /// Channels-last for a rank-\p Rank tensor: [0, 2, ..., Rank-1, 1].
  static Layout getChannelsLast(unsigned Rank);
  /// True if \p Perm is a permutation of 0..Perm.size()-1.
  static bool isPermutation(llvm::ArrayRef<int64_t> Perm);

  bool isIdentity() const { return Perm.empty(); }
  /// The permutation for a tensor of rank \p Rank (identity if empty).
  llvm::SmallVector<unsigned, 6> getPermutation(unsigned Rank) const;
  /// Stored permutation; empty for identity.
  llvm::ArrayRef<unsigned> getStoredPermutation() const { return Perm; }
  /// Whether this layout is valid for a tensor of rank \p Rank.
  bool isValidForRank(unsigned Rank) const;
  bool isChannelsLast(unsigned Rank) const;

  /// Conventional name (`nhwc`, `ndhwc`, `nwc`) or the bracketed permutation
  /// (`[0, 2, 1]`); `nchw`-style name for identity of rank 3..5.
  std::string getName(unsigned Rank) const;
  /// Parse a layout name or a bracketed permutation for a rank-\p Rank
  /// tensor; None if invalid.
  static llvm::Optional<Layout> parse(llvm::StringRef Text, unsigned Rank);

  bool operator==(const Layout &O) const { return Perm == O.Perm; }
  bool operator!=(const Layout &O) const { return !(*this == O); }

private:
  llvm::SmallVector<unsigned, 6> Perm;
};

/// The type of every IR value: element type, logical shape (or unranked),
/// physical layout.
class TensorType {
public:
  /// An unranked tensor of unknown element type.
  TensorType() = default;
  TensorType(ElementType Elt, llvm::ArrayRef<Dim> Shape, Layout L = Layout());
  /// A ranked tensor with all-static dims.
  static TensorType get(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                        Layout L = Layout());
  static TensorType getUnranked(ElementType Elt);

  ElementType getElementType() const { return Elt; }
  bool hasRank() const { return Ranked; }
  unsigned getRank() const;
  llvm::ArrayRef<Dim> getShape() const { return Shape; }
  const Dim &getDim(unsigned I) const { return Shape[I]; }
  const Layout &getLayout() const { return L; }
  bool hasStaticShape() const;
  /// Static dims as integers; asserts hasStaticShape().
  llvm::SmallVector<int64_t, 6> getStaticShape() const;
  /// Number of elements if the shape is static, None otherwise. Types
  /// that pass isWithinSizeLimit() do not overflow it.
  llvm::Optional<int64_t> getNumElements() const;
  /// False when the shape is static and a tensor of this type would hold
  /// more than MaxTensorBytes, or is empty but would with its 0 dims taken
  /// as 1 (its strides then pass int64): computed without overflow; an
  /// unknown element type counts one byte per element. Shape inference
  /// refuses results and the importer inputs that fail it.
  bool isWithinSizeLimit() const;
  /// Why a type fails isWithinSizeLimit, for messages: "more than 2^62
  /// bytes", or for an empty one "empty, but its other dims span more than
  /// 2^62 bytes".
  const char *getSizeLimitProblem() const;

  /// Copies with one component replaced (types are values; nothing mutates
  /// a Value's type in place to change its layout).
  TensorType withLayout(Layout NewL) const;
  TensorType withElementType(ElementType NewElt) const;
  TensorType withShape(llvm::ArrayRef<Dim> NewShape) const;

  bool operator==(const TensorType &O) const {
    return Elt == O.Elt && Ranked == O.Ranked && Shape == O.Shape && L == O.L;
  }
  bool operator!=(const TensorType &O) const { return !(*this == O); }

  /// Textual form, e.g. `tensor<N x 64 x 56 x 56 x f32, nhwc>`.
  void print(llvm::raw_ostream &OS) const;
  std::string str() const;

private:
  ElementType Elt = ElementType::Unknown;
  bool Ranked = false;
  llvm::SmallVector<Dim, 6> Shape;
  Layout L;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &OS, const TensorType &T);

/// Whether \p Name can be printed bare as a symbolic dim or identifier:
/// [A-Za-z_][A-Za-z0-9_.$]*.
bool isBareIdentifier(llvm::StringRef Name);
/// Print \p S as a double-quoted string with C-style escapes.
void printQuotedString(llvm::raw_ostream &OS, llvm::StringRef S);

} // namespace strider

#endif // STRIDER_IR_TYPES_H
