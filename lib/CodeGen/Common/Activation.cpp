//===- Activation.cpp - Fused activation names ----------------------------===//

#include "strider/CodeGen/Activation.h"

using namespace strider::codegen;

const char *Activation::getName() const {
  switch (Kind) {
#define STRIDER_ACTIVATION_NAME(Kind, Name, Op)                                \
  case ActKind::Kind:                                                          \
    return Name;
    STRIDER_ACTIVATIONS(STRIDER_ACTIVATION_NAME)
#undef STRIDER_ACTIVATION_NAME
  }
  return "?";
}
