//===- Activation.cpp - Fused activation names ----------------------------===//

#include "strider/CodeGen/Activation.h"

using namespace strider::codegen;

const char *Activation::getName() const {
  switch (Kind) {
  case ActKind::None:
    return "none";
  case ActKind::Relu:
    return "relu";
  case ActKind::Clip:
    return "clip";
  case ActKind::LeakyRelu:
    return "leaky_relu";
  case ActKind::Sigmoid:
    return "sigmoid";
  case ActKind::HardSigmoid:
    return "hard_sigmoid";
  case ActKind::HardSwish:
    return "hard_swish";
  case ActKind::SiLU:
    return "silu";
  case ActKind::Tanh:
    return "tanh";
  case ActKind::Elu:
    return "elu";
  case ActKind::Selu:
    return "selu";
  case ActKind::Softplus:
    return "softplus";
  case ActKind::Softsign:
    return "softsign";
  case ActKind::Exp:
    return "exp";
  case ActKind::Log:
    return "log";
  case ActKind::Sqrt:
    return "sqrt";
  case ActKind::Reciprocal:
    return "reciprocal";
  case ActKind::Neg:
    return "neg";
  case ActKind::Abs:
    return "abs";
  case ActKind::Floor:
    return "floor";
  case ActKind::Ceil:
    return "ceil";
  case ActKind::Sin:
    return "sin";
  case ActKind::Cos:
    return "cos";
  case ActKind::Tan:
    return "tan";
  case ActKind::Asin:
    return "asin";
  case ActKind::Acos:
    return "acos";
  case ActKind::Atan:
    return "atan";
  case ActKind::Sinh:
    return "sinh";
  case ActKind::Cosh:
    return "cosh";
  case ActKind::Asinh:
    return "asinh";
  case ActKind::Acosh:
    return "acosh";
  case ActKind::Atanh:
    return "atanh";
  case ActKind::Sign:
    return "sign";
  case ActKind::Round:
    return "round";
  case ActKind::ThresholdedRelu:
    return "thresholded_relu";
  case ActKind::Shrink:
    return "shrink";
  case ActKind::Erf:
    return "erf";
  case ActKind::Gelu:
    return "gelu";
  case ActKind::GeluTanh:
    return "gelu_tanh";
  }
  return "?";
}
