//===- Launchers.cpp - The table of the launchers compiled for the host ---===//

#include "OnHost.h"

using namespace strider::cuda;

const KernelLaunchers &onhost::getLaunchers() {
  static const KernelLaunchers L = [] {
    KernelLaunchers T;
    addDataMovementLaunchers(T);
    addElementwiseLaunchers(T);
    addLogicLaunchers(T);
    addPoolingLaunchers(T);
    addRecurrentLaunchers(T);
    addReductionLaunchers(T);
    return T;
  }();
  return L;
}
