//===- Recurrence.h - Attributes of the recurrent ops -----------*- C++ -*-===//
//
// What shape inference, the reference kernels and the CPU backend read from
// an LSTM or GRU node: directions, hidden size, operand layout and gate
// activations, each parsed once here with located errors.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_RECURRENCE_H
#define STRIDER_IR_RECURRENCE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace strider {

class Node;

/// Gate nonlinearities a recurrence may name in `activations`.
enum class RnnActivation { Sigmoid, Tanh, Relu, Softsign, Softplus };

/// The attributes of an LSTM or GRU node.
struct RecurrenceAttrs {
  bool Forward = true;  ///< A forward pass runs (direction 0).
  bool Reverse = false; ///< A reverse pass runs (the last direction).
  unsigned NumDirections = 1;
  /// hidden_size; -1 when the attribute is absent (then R's last dim).
  int64_t HiddenSize = -1;
  bool BatchMajor = false;        ///< layout = 1: X is [batch, seq, input].
  float Clip = 0;                 ///< 0: no clipping.
  bool InputForget = false;       ///< LSTM only.
  bool LinearBeforeReset = false; ///< GRU only.
  /// Per direction: the gate activation (f), the cell activation (g) and
  /// the output activation (h) of LSTM; f and g of GRU.
  llvm::SmallVector<RnnActivation, 6> Activations;
};

/// Reads and checks the attributes of \p N, a recurrence with \p
/// NumActivations activations per direction (3 for LSTM, 2 for GRU). Errors are
/// located at \p N: an unknown direction, layout or activation name, a
/// wrong number of activations, activation_alpha/beta (not supported), a
/// negative clip or a non-positive hidden_size.
llvm::Expected<RecurrenceAttrs> readRecurrenceAttrs(const Node &N,
                                                    unsigned NumActivations);

/// Applies \p A to \p X.
double applyRnnActivation(RnnActivation A, double X);

} // namespace strider

#endif // STRIDER_IR_RECURRENCE_H
