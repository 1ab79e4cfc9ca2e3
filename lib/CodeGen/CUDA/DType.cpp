//===- DType.cpp - Device storage types -----------------------------------===//

#include "Kernels.h"

const char *strider::cuda::getDTypeName(DType T) {
  switch (T) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}
