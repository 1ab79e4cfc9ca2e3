//===- PassRegistry.cpp - The table of registered passes ------------------===//
//
// Built from Passes.def; used by tools for flags, --help and pipelines.
//
//===----------------------------------------------------------------------===//

#include "strider/Transforms/Passes.h"
#include "strider/IR/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"

using namespace strider;

static const PassInfo Registry[] = {
#define STRIDER_PASS(Arg, Factory, Desc) {Arg, Desc, &Factory},
#include "strider/Transforms/Passes.def"
};

llvm::ArrayRef<PassInfo> strider::getRegisteredPasses() { return Registry; }

const PassInfo *strider::lookupPass(llvm::StringRef Argument) {
  for (const PassInfo &P : Registry)
    if (P.Argument == Argument)
      return &P;
  return nullptr;
}

llvm::Error strider::parsePassPipeline(llvm::StringRef Pipeline,
                                       PassManager &PM) {
  llvm::SmallVector<llvm::StringRef, 8> Names;
  Pipeline.split(Names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Name : Names) {
    Name = Name.trim();
    const PassInfo *P = lookupPass(Name);
    if (!P)
      return makeError("unknown pass '" + Name + "' in pipeline '" +
                       Pipeline + "'");
    PM.addPass(P->Create());
  }
  return llvm::Error::success();
}

llvm::StringRef strider::getDefaultPipeline() {
  return "infer-shapes,canonicalize,infer-shapes,layout-assignment";
}

llvm::StringRef strider::getPreparePipeline() {
  return "canonicalize,infer-shapes";
}
