//===- Tuning.h - Measured kernel times for the cost model ------*- C++ -*-===//
//
// A tuning table holds kernel times measured on one machine, normally by
// `strider-compile --tune`, which runs the CPU backend's kernels: for each
// convolution configuration, the time of each layout variant of its kernel
// (read NCHW or NHWC, write NCHW or NHWC), and for each tensor shape the
// time of a relayout. Layout assignment given a table costs a conv or a
// relayout it holds by the measurement, and everything else by the
// target's estimates with the conv efficiencies and relayout bandwidth
// fitted to the table (calibrateTarget).
//
// The file form is line-oriented text, one entry per line, sorted by key,
// so that a table diffs and merges well:
//
//   strider-tuning 1
//   target cpu-avx512
//   simd AVX3
//   threads 1
//   margin 0.05
//   conv x=1x64x56x56 w=64x64x3x3 y=1x64x56x56 s=1x1 p=1x1x1x1 d=1x1 g=1
//        b=1 r=0 nchw=812.4 nhwc=655.0 nchw>nhwc=701.9 nhwc>nchw=690.2
//   relayout 1x64x56x56 ns=98.1
//
// (one line per conv; the break above is for width). Times are
// nanoseconds per call; `-` marks a variant the backend has no kernel for.
// `r=1` marks a conv timed with its residual Add fused (`r` may be left
// out: 0).
//
// A table of a cuda-* target, measured by the CUDA backend, names the
// device and the precision its convs ran in instead of `simd` and
// `threads`, and adds the cuDNN algorithm that won for each conv
// configuration the backend ran (keyed as the CUDA backend keys convs; the
// algorithm's name, its time and workspace bytes):
//
//   strider-tuning 1
//   target cuda-sm90
//   device NVIDIA H100 80GB HBM3 (sm_90)
//   precision fp16
//   margin 0.05
//   conv ...
//   relayout 1x64x56x56 ns=3.1
//   algo IMPLICIT_PRECOMP_GEMM ns=9120.0 ws=0 x=1x64x56x56 w=64x64x3x3
//        s=1x1 p=1x1x1x1 d=1x1 g=1 xl=nhwc yl=nhwc f16
//
// (the algorithm's key is the rest of its line). Relayout times of such a
// table are for data of its precision's element type.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LAYOUT_TUNING_H
#define STRIDER_LAYOUT_TUNING_H

#include "strider/Layout/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Node;
class TensorType;

namespace layout {

class DimBindings;

/// The kernels of one convolution a table times, by the layouts they read
/// and write.
enum ConvVariant : uint8_t {
  ReadFirstWriteFirst,
  ReadLastWriteLast,
  ReadFirstWriteLast,
  ReadLastWriteFirst,
  NumConvVariants
};

/// `nchw`, `nhwc`, `nchw>nhwc` or `nhwc>nchw` (read>write).
llvm::StringRef getConvVariantName(ConvVariant V);

/// The geometry of a convolution, all dims known: what a table entry is
/// keyed by. Shapes are logical (N, C, spatial...).
struct ConvConfig {
  std::vector<int64_t> X, W, Y;
  std::vector<int64_t> Strides, Pads, Dilations;
  /// `auto_pad` when it is not NOTSET (Pads is then empty).
  std::string AutoPad;
  int64_t Group = 1;
  bool HasBias = false;
  /// Whether the conv's only reader adds a tensor of its shape to it (a
  /// residual Add, which the CPU backend fuses into the conv and which
  /// changes the kernel some layouts get).
  bool HasResidual = false;

  /// The config of Conv node \p N with \p Dims bound, or false if \p N is
  /// no Conv or a dim is not known.
  static bool fromNode(const Node &N, const DimBindings &Dims, ConvConfig &Out);
  /// The key text: `x=... w=... y=... s=... p=... d=... g=... b=... r=...`.
  std::string getKey() const;
  /// Multiply-adds of one call.
  double getMacs() const;
};

/// Nanoseconds per call of each variant of a conv; negative: no kernel
/// (or not measured).
struct ConvTiming {
  double Ns[NumConvVariants] = {-1, -1, -1, -1};
};

/// The library algorithm measured fastest for one conv (cuda-* tables).
struct TunedAlgorithm {
  std::string Name;
  double Ns = 0;
  uint64_t WorkspaceBytes = 0;
};

class TuningTable {
public:
  /// Where the table was measured: a target name, the SIMD target the
  /// kernels dispatched to, and the threads each kernel ran on.
  std::string Target;
  std::string Simd;
  int Threads = 1;
  /// Tables of cuda-* targets: the device ("NVIDIA H100 80GB HBM3
  /// (sm_90)") and the precision the convs were timed in (fp32, tf32, fp16
  /// or bf16). Empty for CPU tables.
  std::string Device;
  std::string Precision;
  /// Variants of a conv measured within this fraction of its fastest
  /// (offered) variant count as equally fast: timings are noisy, and a
  /// difference that small should not outweigh the rest of the graph.
  double Margin = 0.05;

  /// Key of a relayout of a tensor of shape \p T (f32; its layout does not
  /// matter), or empty if a dim is not known.
  static std::string getRelayoutKey(const TensorType &T,
                                    const DimBindings &Dims);

  const ConvTiming *lookupConv(llvm::StringRef Key) const;
  void setConv(const ConvConfig &C, const ConvTiming &T);
  /// Nanoseconds of a relayout (either direction), or negative.
  double lookupRelayout(llvm::StringRef Key) const;
  void setRelayout(llvm::StringRef Key, double Ns);
  /// Algorithms by library key (the CUDA backend's conv keys).
  const std::map<std::string, TunedAlgorithm> &getAlgorithms() const {
    return Algorithms;
  }
  void setAlgorithm(llvm::StringRef Key, const TunedAlgorithm &A);
  size_t getNumConvs() const { return Convs.size(); }
  size_t getNumRelayouts() const { return Relayouts.size(); }
  /// Every measurement: convs, relayouts and algorithms.
  size_t getNumEntries() const {
    return Convs.size() + Relayouts.size() + Algorithms.size();
  }

  /// The target \p Base with its conv efficiencies (per kind and layout)
  /// and relayout bandwidth replaced by the medians the table's entries
  /// imply; a figure with no entry to fit it keeps its estimate.
  TargetDescription calibrateTarget(const TargetDescription &Base) const;

  void print(llvm::raw_ostream &OS) const;
  /// Parses the text form; errors are `<Name>:<line>:<col>: ...`.
  static llvm::Expected<TuningTable> parse(llvm::StringRef Text,
                                           llvm::StringRef Name);
  static llvm::Expected<TuningTable> readFile(llvm::StringRef Path);
  /// Writes the text form atomically (a temporary file renamed over
  /// \p Path).
  llvm::Error writeFile(llvm::StringRef Path) const;

private:
  struct ConvEntry {
    ConvConfig Config;
    ConvTiming Timing;
  };
  std::map<std::string, ConvEntry> Convs;
  std::map<std::string, double> Relayouts;
  std::map<std::string, TunedAlgorithm> Algorithms;
};

} // namespace layout
} // namespace strider

#endif // STRIDER_LAYOUT_TUNING_H
