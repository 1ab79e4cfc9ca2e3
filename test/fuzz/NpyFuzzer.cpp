//===- NpyFuzzer.cpp - libFuzzer target on the .npy reader ---------------===//
//
// Feeds arbitrary bytes to parseNpy (magic, versions 1 to 3, the header's
// Python dict, dtypes, shapes and their byte counts); a tensor that parses
// is written back with writeNpy and must read back to the same elements. Seeds
// in test/fuzz/corpus/npy are NumPy's own files.
//
//===----------------------------------------------------------------------===//

#include "strider/Runtime/Npy.h"
#include "strider/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  auto T = strider::runtime::parseNpy(Bytes, "fuzz.npy");
  if (!T) {
    llvm::consumeError(T.takeError());
    return 0;
  }
  auto Written = strider::runtime::writeNpy(*T);
  if (!Written) {
    // Some element types read but are not written (a message, no crash).
    llvm::consumeError(Written.takeError());
    return 0;
  }
  auto Back = strider::runtime::parseNpy(*Written, "written.npy");
  // Compared in one layout: a Fortran-order file is written back in C
  // order.
  if (!Back ||
      Back->getType().withLayout(strider::Layout()) !=
          T->getType().withLayout(strider::Layout()) ||
      Back->withLayout(T->getLayout()).getBytes() != T->getBytes()) {
    if (!Back)
      std::fprintf(stderr, "written .npy does not read back: %s\n",
                   llvm::toString(Back.takeError()).c_str());
    else
      std::fprintf(stderr, "written .npy reads back different\n");
    std::abort();
  }
  return 0;
}
