// placeholder: being written
#include "strider/IR/AsmParser.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
llvm::Expected<std::unique_ptr<strider::Graph>> strider::parseGraph(llvm::StringRef, llvm::StringRef) { return makeError("todo"); }
