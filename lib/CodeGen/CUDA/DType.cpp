//===- DType.cpp - Device storage types -----------------------------------===//

#include "Kernels.h"

#include <iterator>

const char *strider::cuda::getDTypeName(DType T) {
  static const char *const Names[] = {"f32", "f16", "bf16"};
  return size_t(T) < std::size(Names) ? Names[size_t(T)] : "?";
}
