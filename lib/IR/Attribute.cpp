//===- Attribute.cpp - Node attributes ------------------------------------===//
//
// Attribute kind names and equality (tensor attributes compare by content,
// graph attributes by their printed form).
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Attribute.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"

#include "llvm/Support/raw_ostream.h"

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
  case AttrKind::Graph:
    return "graph";
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
  case AttrKind::Graph: {
    if (getGraph() == O.getGraph())
      return true;
    if (!getGraph() || !O.getGraph())
      return false;
    // The same text is the same graph: names, types, attributes, order.
    std::string A, B;
    llvm::raw_string_ostream AS(A), BS(B);
    printGraph(*getGraph(), AS);
    printGraph(*O.getGraph(), BS);
    return AS.str() == BS.str();
  }
  default:
    return V == O.V;
  }
}
