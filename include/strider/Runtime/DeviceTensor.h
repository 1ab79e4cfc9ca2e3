//===- DeviceTensor.h - A tensor in a device's memory -----------*- C++ -*-===//
//
// A tensor a backend reads or writes in place in memory the caller owns on
// the backend's device (a CUDA device pointer): where it is, its element
// type, its logical shape and its element strides. Strider never frees or
// keeps it past the call it was given to.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_DEVICETENSOR_H
#define STRIDER_RUNTIME_DEVICETENSOR_H

#include "strider/IR/Types.h"

#include <map>
#include <string>
#include <vector>

namespace strider {
namespace runtime {

struct DeviceTensor {
  void *Data = nullptr;
  ElementType Type = ElementType::Unknown;
  /// Logical dims (N, C, spatial... for activations).
  std::vector<int64_t> Shape;
  /// Elements between neighbours along each logical dim (non-negative);
  /// empty: dense row-major.
  std::vector<int64_t> Strides;
};

/// Device tensors by value name (graph inputs, graph outputs).
using DeviceTensorMap = std::map<std::string, DeviceTensor>;

} // namespace runtime
} // namespace strider

#endif // STRIDER_RUNTIME_DEVICETENSOR_H
