// 2 × 2, stride-2 pooling plus the activation that follows it, on a group of examples in the lanes
// layout (lanes.h), forward and backward.
//
// Max pooling records, per output and lane, which of its 4 inputs won: code = column + 2·row (0 top-left,
// 1 top-right, 2 bottom-left, 3 bottom-right), stored as a Scalar so that codes and values share one packet
// type. Ties go to the top row, then to the left column — a fixed choice of maximal element, i.e. a valid
// subgradient; ties are common (constant image regions give equal pre-activations). The backward pass
// routes each gradient to its winner with one compare-and-select per input, no branches.
//
// Shapes: z (and δ) [C][H][W][L]; codes [C][H/2][W/2][L]; the pooled, activated output y is written to
// (and read back from) a strided destination — the next convolution's zero-padded input, or the dense
// layers' flat input — given by its plane and row strides.
#pragma once

#include <cstdint>

#include "models/cnn/activation.h"
#include "models/cnn/cnn_options.h"
#include "models/cnn/lanes.h"

namespace asyncdp::models::cnn {

// Where the pooled output lives: y(c, i, j) at data + c·plane + i·row + j·L.
template <typename Scalar>
struct StridedLanes {
  Scalar* data;
  int64_t plane;
  int64_t row;
};

// y = act(pool(z)); codes written for max pooling (may be null for average pooling).
template <typename Scalar>
void PoolForward(Pooling pooling, Activation activation, int channels, int height, int width, const Scalar* z,
                 Scalar* codes, StridedLanes<Scalar> y) {
  using lanes::Broadcast, lanes::Equal, lanes::Less, lanes::Load, lanes::Select, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  const int out_h = height / 2;
  const int out_w = width / 2;
  const int64_t row = int64_t{width} * L;
  const auto zero = lanes::Zero<Scalar>(), one = Broadcast(Scalar{1}), two = Broadcast(Scalar{2}),
             three = Broadcast(Scalar{3}), quarter = Broadcast(Scalar{0.25});
  // ReLU is applied as each pooled value is stored (Eigen's pmax(x, 0), as ActivationForward's a.max(0)
  // computes it); other activations take a pass over the row afterwards.
  const bool relu = activation == Activation::kRelu;
  auto Activated = [&](const lanes::Packet<Scalar>& v) { return relu ? Eigen::internal::pmax(v, zero) : v; };
  for (int c = 0; c < channels; ++c) {
    for (int i = 0; i < out_h; ++i) {
      const Scalar* top = z + (int64_t{c} * height + 2 * i) * row;
      const Scalar* bottom = top + row;
      Scalar* out = y.data + c * y.plane + i * y.row;
      Scalar* code = codes == nullptr ? nullptr : codes + (int64_t{c} * out_h + i) * out_w * L;
      for (int j = 0; j < out_w; ++j) {
        const auto tl = Load(top + 2 * j * L), tr = Load(top + (2 * j + 1) * L);
        const auto bl = Load(bottom + 2 * j * L), br = Load(bottom + (2 * j + 1) * L);
        if (pooling == Pooling::kMax) {
          // Vertical first (bottom wins only if strictly larger), then horizontal (right only if strictly
          // larger).
          const auto left_lower = Less<Scalar>(tl, bl), right_lower = Less<Scalar>(tr, br);
          const auto left = Select<Scalar>(left_lower, bl, tl), right = Select<Scalar>(right_lower, br, tr);
          const auto left_code = Select<Scalar>(left_lower, two, zero);
          const auto right_code = Select<Scalar>(right_lower, three, one);
          const auto right_wins = Less<Scalar>(left, right);
          Store(out + j * L, Activated(Select<Scalar>(right_wins, right, left)));
          Store(code + j * L, Select<Scalar>(right_wins, right_code, left_code));
        } else {
          Store(out + j * L,
                Activated(lanes::Mul(quarter, lanes::Add(lanes::Add(tl, bl), lanes::Add(tr, br)))));
        }
      }
      if (activation != Activation::kRelu) ActivationForward(activation, int64_t{out_w} * L, out);
    }
  }
}

// δ (= ∂loss/∂z, overwritten) from g = ∂loss/∂y ([C][H/2][W/2][L]; for activations other than ReLU
// overwritten with g ⊙ act'(y), for ReLU left as it was) and the
// pooled outputs y.
template <typename Scalar>
void PoolBackward(Pooling pooling, Activation activation, int channels, int height, int width,
                  StridedLanes<Scalar> y, const Scalar* codes, Scalar* g, Scalar* delta) {
  using lanes::Broadcast, lanes::Equal, lanes::Less, lanes::Load, lanes::Select, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  const int out_h = height / 2;
  const int out_w = width / 2;
  const int64_t row = int64_t{width} * L;
  const auto zero = lanes::Zero<Scalar>(), quarter = Broadcast(Scalar{0.25});
  const lanes::Packet<Scalar> code_value[4] = {zero, Broadcast(Scalar{1}), Broadcast(Scalar{2}),
                                               Broadcast(Scalar{3})};
  for (int c = 0; c < channels; ++c) {
    for (int i = 0; i < out_h; ++i) {
      Scalar* grad = g + (int64_t{c} * out_h + i) * out_w * L;
      const Scalar* y_row = y.data + c * y.plane + i * y.row;
      // ReLU's derivative is applied in the loop below (g · [y > 0], the same select as ActivationBackward's,
      // without a pass of its own); other activations take their pass here.
      if (activation != Activation::kRelu) ActivationBackward(activation, int64_t{out_w} * L, y_row, grad);
      Scalar* top = delta + (int64_t{c} * height + 2 * i) * row;
      Scalar* bottom = top + row;
      const Scalar* code = codes == nullptr ? nullptr : codes + (int64_t{c} * out_h + i) * out_w * L;
      for (int j = 0; j < out_w; ++j) {
        auto gv = Load(grad + j * L);
        if (activation == Activation::kRelu)
          gv = Select<Scalar>(Less<Scalar>(zero, Load(y_row + j * L)), gv, zero);
        if (pooling == Pooling::kMax) {
          const auto cv = Load(code + j * L);
          Store(top + 2 * j * L, Select<Scalar>(Equal<Scalar>(cv, code_value[0]), gv, zero));
          Store(top + (2 * j + 1) * L, Select<Scalar>(Equal<Scalar>(cv, code_value[1]), gv, zero));
          Store(bottom + 2 * j * L, Select<Scalar>(Equal<Scalar>(cv, code_value[2]), gv, zero));
          Store(bottom + (2 * j + 1) * L, Select<Scalar>(Equal<Scalar>(cv, code_value[3]), gv, zero));
        } else {
          const auto q = lanes::Mul(quarter, gv);
          Store(top + 2 * j * L, q);
          Store(top + (2 * j + 1) * L, q);
          Store(bottom + 2 * j * L, q);
          Store(bottom + (2 * j + 1) * L, q);
        }
      }
    }
  }
}

}  // namespace asyncdp::models::cnn
