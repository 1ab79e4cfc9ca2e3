//===- Attribute.h - Node attributes ----------------------------*- C++ -*-===//
//
// Attributes carry ONNX attribute values with their ONNX kinds: int, float,
// string, ints, floats, strings, tensor and graph. A graph attribute (an
// If's branch) is an immutable subgraph shared by the copies of its node
// (two compare equal when they print alike):
// its inputs stand for the values the node passes it (see the If op in
// Ops.def), so a subgraph never refers to the graph around it.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_ATTRIBUTE_H
#define STRIDER_IR_ATTRIBUTE_H

#include "strider/IR/TensorData.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace strider {

class Graph;
/// A subgraph attribute's graph: immutable once built, shared by copies.
using GraphRef = std::shared_ptr<const Graph>;

enum class AttrKind : uint8_t {
  Int,
  Float,
  String,
  Ints,
  Floats,
  Strings,
  Tensor,
  Graph,
};

/// Name of an attribute kind as used in op schemas (`int`, `floats`, ...).
llvm::StringRef getAttrKindName(AttrKind K);

class Attribute {
public:
  Attribute() : V(int64_t(0)) {}
  static Attribute getInt(int64_t I) { return Attribute(I); }
  static Attribute getFloat(float F) { return Attribute(F); }
  static Attribute getString(std::string S) { return Attribute(std::move(S)); }
  static Attribute getInts(std::vector<int64_t> I) {
    return Attribute(std::move(I));
  }
  static Attribute getFloats(std::vector<float> F) {
    return Attribute(std::move(F));
  }
  static Attribute getStrings(std::vector<std::string> S) {
    return Attribute(std::move(S));
  }
  static Attribute getTensor(TensorDataRef T) { return Attribute(std::move(T)); }
  static Attribute getGraph(GraphRef G) { return Attribute(std::move(G)); }

  AttrKind getKind() const { return static_cast<AttrKind>(V.index()); }
  int64_t getInt() const { return std::get<int64_t>(V); }
  float getFloat() const { return std::get<float>(V); }
  const std::string &getString() const { return std::get<std::string>(V); }
  const std::vector<int64_t> &getInts() const {
    return std::get<std::vector<int64_t>>(V);
  }
  const std::vector<float> &getFloats() const {
    return std::get<std::vector<float>>(V);
  }
  const std::vector<std::string> &getStrings() const {
    return std::get<std::vector<std::string>>(V);
  }
  const TensorDataRef &getTensor() const { return std::get<TensorDataRef>(V); }
  const GraphRef &getGraph() const { return std::get<GraphRef>(V); }

  bool operator==(const Attribute &O) const;
  bool operator!=(const Attribute &O) const { return !(*this == O); }

private:
  template <typename T> explicit Attribute(T X) : V(std::move(X)) {}
  // Alternative order matches AttrKind.
  std::variant<int64_t, float, std::string, std::vector<int64_t>,
               std::vector<float>, std::vector<std::string>, TensorDataRef,
               GraphRef>
      V;
};

struct NamedAttribute {
  std::string Name;
  Attribute Value;
};

} // namespace strider

#endif // STRIDER_IR_ATTRIBUTE_H
