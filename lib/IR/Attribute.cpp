//===- Attribute.cpp - Node attributes ------------------------------------===//
//
// Attribute kind names and equality (tensor attributes compare by content).
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Attribute.h"

#include <cstring>

using namespace strider;

llvm::StringRef strider::getAttrKindName(AttrKind K) {
  switch (K) {
  case AttrKind::Int: return "int";
  case AttrKind::Float: return "float";
  case AttrKind::String: return "string";
  case AttrKind::Ints: return "ints";
  case AttrKind::Floats: return "floats";
  case AttrKind::Strings: return "strings";
  case AttrKind::Tensor: return "tensor";
  }
  return "?";
}

bool Attribute::operator==(const Attribute &O) const {
  if (getKind() != O.getKind())
    return false;
  switch (getKind()) {
  case AttrKind::Float: {
    // Bitwise, so that NaN attributes compare equal to themselves.
    float A = getFloat(), B = O.getFloat();
    return std::memcmp(&A, &B, sizeof(float)) == 0;
  }
  case AttrKind::Floats: {
    const auto &A = getFloats(), &B = O.getFloats();
    return A.size() == B.size() &&
           (A.empty() ||
            std::memcmp(A.data(), B.data(), A.size() * sizeof(float)) == 0);
  }
  case AttrKind::Tensor:
    return getTensor() == O.getTensor() ||
           (getTensor() && O.getTensor() && *getTensor() == *O.getTensor());
  default:
    return V == O.V;
  }
}
