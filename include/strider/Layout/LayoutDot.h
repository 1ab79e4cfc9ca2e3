//===- LayoutDot.h - Graphviz view of a graph's layouts ---------*- C++ -*-===//
//
// Writes a graph as Graphviz DOT with every node coloured by the layout it
// writes (channels-first, channels-last, other) and relayouts highlighted.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LAYOUT_LAYOUTDOT_H
#define STRIDER_LAYOUT_LAYOUTDOT_H

namespace llvm {
class raw_ostream;
}

namespace strider {
class Graph;
namespace layout {

/// Print \p G as a DOT digraph (deterministic: nodes in graph order).
void printLayoutDot(const Graph &G, llvm::raw_ostream &OS);

} // namespace layout
} // namespace strider

#endif // STRIDER_LAYOUT_LAYOUTDOT_H
