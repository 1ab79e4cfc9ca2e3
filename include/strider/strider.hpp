//===- strider.hpp - A header-only C++ wrapper over the C API --*- C++ -*-===//
//
// RAII owners for strider.h's objects; failures throw strider::api::Error
// (a std::runtime_error carrying the C API's status and message). C++17;
// links against libstrider only. The C API's thread-safety rules hold:
// a Model and a Session may be shared between threads, and runs of one
// Session from several threads overlap; output() describes the calling
// thread's last prepare() or run().
//
//   strider::api::Model M = strider::api::Model::load("resnet.onnx");
//   strider::api::Session S(M, strider::api::SessionOptions().threads(2));
//   S.run({Image}, {Logits});       // DLTensor views of caller memory
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_STRIDER_HPP
#define STRIDER_STRIDER_HPP

#include "strider/strider.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strider {
namespace api {

/// A failed C API call.
class Error : public std::runtime_error {
public:
  Error(strider_status Status, const std::string &Message)
      : std::runtime_error(Message), Status(Status) {}
  strider_status status() const { return Status; }

private:
  strider_status Status;
};

/// Throws the calling thread's last error unless \p S is STRIDER_OK.
inline void check(strider_status S) {
  if (S != STRIDER_OK)
    throw Error(S, strider_last_error());
}

/// A view of contiguous elements (C++17 stand-in for std::span).
template <typename T> class View {
public:
  View() = default;
  View(T *Data, size_t Size) : Ptr(Data), Count(Size) {}
  template <typename Container>
  View(Container &C) : Ptr(C.data()), Count(C.size()) {}
  View(std::initializer_list<std::remove_const_t<T>> L)
      : Ptr(L.begin()), Count(L.size()) {}
  T *data() const { return Ptr; }
  size_t size() const { return Count; }
  T &operator[](size_t I) const { return Ptr[I]; }

private:
  T *Ptr = nullptr;
  size_t Count = 0;
};

/// A DLTensor over caller memory: \p Shape must outlive it; \p Strides
/// (elements) may be null for row-major.
inline DLTensor tensorView(void *Data, DLDataType Type,
                           const std::vector<int64_t> &Shape,
                           const int64_t *Strides = nullptr) {
  DLTensor T{};
  T.data = Data;
  T.device = DLDevice{kDLCPU, 0};
  T.ndim = int32_t(Shape.size());
  T.dtype = Type;
  T.shape = const_cast<int64_t *>(Shape.data());
  T.strides = const_cast<int64_t *>(Strides);
  T.byte_offset = 0;
  return T;
}

inline DLDataType float32() { return DLDataType{kDLFloat, 32, 1}; }
inline DLDataType int64() { return DLDataType{kDLInt, 64, 1}; }

/// An input or output, copied out of the C API's strider_tensor_info.
struct TensorInfo {
  std::string Name;
  DLDataType Type{0, 0, 0};
  bool Ranked = false;
  std::vector<int64_t> Shape;         ///< -1 for a symbolic dim.
  std::vector<std::string> DimNames;  ///< "" for a static dim.
  std::vector<int32_t> DimOrder;      ///< Memory order, outermost first.
  std::string Layout;

  explicit TensorInfo(const strider_tensor_info &I)
      : Name(I.name), Type(I.dtype), Ranked(I.ndim >= 0),
        Layout(I.layout ? I.layout : "") {
    for (int32_t D = 0; D < I.ndim; ++D) {
      Shape.push_back(I.shape[D]);
      DimNames.push_back(I.dim_names[D] ? I.dim_names[D] : "");
      DimOrder.push_back(I.dim_order[D]);
    }
  }
  /// Elements, when every dim is static.
  int64_t numElements() const {
    int64_t N = 1;
    for (int64_t D : Shape)
      N *= D;
    return N;
  }
};

class Model {
public:
  static Model load(const std::string &Path) {
    strider_model *M = nullptr;
    check(strider_model_load(Path.c_str(), &M));
    return Model(M);
  }
  Model(Model &&O) noexcept : M(std::exchange(O.M, nullptr)) {}
  Model &operator=(Model &&O) noexcept {
    std::swap(M, O.M);
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { strider_model_free(M); }

  size_t numInputs() const { return strider_model_num_inputs(M); }
  size_t numOutputs() const { return strider_model_num_outputs(M); }
  TensorInfo input(size_t I) const {
    strider_tensor_info Info;
    check(strider_model_input_info(M, I, &Info));
    return TensorInfo(Info);
  }
  TensorInfo output(size_t I) const {
    strider_tensor_info Info;
    check(strider_model_output_info(M, I, &Info));
    return TensorInfo(Info);
  }
  /// The sizes dim \p Axis of input \p I may take, {min, max}
  /// (strider_model_input_dim_range).
  std::pair<int64_t, int64_t> inputDimRange(size_t I, int32_t Axis) const {
    std::pair<int64_t, int64_t> R;
    check(strider_model_input_dim_range(M, I, Axis, &R.first, &R.second));
    return R;
  }
  const strider_model *get() const { return M; }

private:
  explicit Model(strider_model *M) : M(M) {}
  strider_model *M;
};

class SessionOptions {
public:
  SessionOptions() { check(strider_session_options_create(&O)); }
  SessionOptions(SessionOptions &&Other) noexcept
      : O(std::exchange(Other.O, nullptr)) {}
  SessionOptions(const SessionOptions &) = delete;
  SessionOptions &operator=(const SessionOptions &) = delete;
  ~SessionOptions() { strider_session_options_free(O); }

  SessionOptions &threads(int N) {
    check(strider_session_options_set_threads(O, N));
    return *this;
  }
  SessionOptions &backend(const std::string &Name) {
    check(strider_session_options_set_backend(O, Name.c_str()));
    return *this;
  }
  SessionOptions &device(DLDevice D) {
    check(strider_session_options_set_device(O, D));
    return *this;
  }
  SessionOptions &precision(const std::string &Name) {
    check(strider_session_options_set_precision(O, Name.c_str()));
    return *this;
  }
  SessionOptions &dim(const std::string &Symbol, int64_t Size) {
    check(strider_session_options_set_dim(O, Symbol.c_str(), Size));
    return *this;
  }
  SessionOptions &optimize(bool On) {
    check(strider_session_options_set_optimize(O, On ? 1 : 0));
    return *this;
  }
  /// strider_session_options_set_input_range.
  SessionOptions &inputRange(const std::string &Input, int32_t Axis,
                             int64_t Min, int64_t Max) {
    check(strider_session_options_set_input_range(O, Input.c_str(), Axis, Min,
                                                  Max));
    return *this;
  }
  /// strider_session_options_set_cache_limits.
  SessionOptions &cacheLimits(size_t MaxPrograms, int64_t MaxBytes) {
    check(strider_session_options_set_cache_limits(O, MaxPrograms, MaxBytes));
    return *this;
  }
  /// strider_session_options_set_max_memory.
  SessionOptions &maxMemory(uint64_t MaxBytes) {
    check(strider_session_options_set_max_memory(O, MaxBytes));
    return *this;
  }
  /// strider_session_options_set_optimize_per_shape.
  SessionOptions &optimizePerShape(bool On) {
    check(strider_session_options_set_optimize_per_shape(O, On ? 1 : 0));
    return *this;
  }
  const strider_session_options *get() const { return O; }

private:
  strider_session_options *O = nullptr;
};

class Session {
public:
  explicit Session(const Model &M) {
    check(strider_session_create(M.get(), nullptr, &S));
  }
  Session(const Model &M, const SessionOptions &Opts) {
    check(strider_session_create(M.get(), Opts.get(), &S));
  }
  Session(Session &&O) noexcept : S(std::exchange(O.S, nullptr)) {}
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { strider_session_free(S); }

  /// Specializes to the inputs' shapes; then output(), on this thread, has
  /// static shapes.
  void prepare(View<const DLTensor> Inputs) {
    check(strider_session_prepare(S, Inputs.data(), Inputs.size()));
  }
  TensorInfo output(size_t I) const {
    strider_tensor_info Info;
    check(strider_session_output_info(S, I, &Info));
    return TensorInfo(Info);
  }
  /// Writes the outputs into the memory \p Outputs point to (the
  /// DLTensor structs themselves are not modified).
  void run(View<const DLTensor> Inputs, View<const DLTensor> Outputs) {
    check(strider_session_run(S, Inputs.data(), Inputs.size(),
                              const_cast<DLTensor *>(Outputs.data()),
                              Outputs.size()));
  }
  size_t programsBuilt() const {
    return strider_session_num_programs_built(S);
  }
  /// strider_session_num_size_classes.
  size_t sizeClasses() const { return strider_session_num_size_classes(S); }

private:
  strider_session *S = nullptr;
};

} // namespace api
} // namespace strider

#endif // STRIDER_STRIDER_HPP
