// placeholder: being written
#include "strider/IR/AsmPrinter.h"
#include "llvm/Support/raw_ostream.h"
void strider::printGraph(const Graph &, llvm::raw_ostream &OS) { OS << "TODO\n"; }
