// The computational core shared by every CNN model: forward pass, backward pass with exact per-example
// gradients, and per-example clipping for one chunk of examples, templated on the scalar type. The float
// instantiation is the fast path behind CnnModel; the double instantiation is the same code in double
// precision, used by the finite-difference gradient checks.
//
// A chunk is processed in groups of L examples (L = SIMD width, lanes.h), example r of a group in lane r
// of every vector; a partial last group leaves its other lanes zero and ignored. Per-example gradients
// (never a batch-averaged shortcut):
//   dense layers — δ_r (out) and a_r (in) per example; ||∇W_r||² = ||δ_r||²·||a_r||² (rank one);
//   conv layers  — ∇Wt_r = Σ_positions x_r ⊗ δ_r, accumulated lane-wise into a group buffer
//                  (conv_lanes.h): every example's exact gradient, at the price of one batched one.
// Then c_r = min(1, C / ||∇f_r||) (docs/theory.md §2), and the group's clipped sum Σ_r c_r ∇f_r: a
// lane-weighted sum per conv parameter and one product of depth L per dense layer (dense.h).
//
// Thread safety: a CnnNetwork is immutable; each ChunkScratch belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "data/dataset.h"
#include "models/cnn/architecture.h"
#include "models/cnn/cnn_options.h"
#include "models/cnn/lanes.h"
#include "models/cnn/softmax_loss.h"

namespace asyncdp::models::cnn {

// The tensors of one group of L examples (shapes in the lanes layout, lanes.h).
template <typename Scalar>
struct GroupScratch {
  GroupScratch(const CnnGeometry& geometry);

  int count = 0;                            // examples loaded (lanes count .. L−1 are zero)
  std::vector<int32_t> labels;              // L
  std::vector<VectorX<Scalar>> conv_in;     // conv l's zero-padded input [C_in][H+2p][W+2p][L]
  std::vector<VectorX<Scalar>> conv_pre;    // pre-pooling z [C_out][H_out][W_out][L]; backward: δ
  std::vector<VectorX<Scalar>> pool_codes;  // max pooling winners [C_out][H_out/2][W_out/2][L]
  std::vector<VectorX<Scalar>> conv_in_grad;  // l ≥ 1: gradient of conv l's unpadded input [C_in][H][W][L]
  std::vector<VectorX<Scalar>> conv_grads;    // per-example parameter gradients [num_params][L]
  VectorX<Scalar> flat;                       // first dense layer's input [in][L] (= last pooled output)
  VectorX<Scalar> flat_grad;                  // its gradient
  std::vector<VectorX<Scalar>> dense_out;     // activations (logits for the last layer) [out][L]
  std::vector<VectorX<Scalar>> dense_grad;    // δ = gradient of the pre-activation [out][L]
  VectorX<Scalar> transposed;                 // DenseClippedSum scratch
  std::vector<double> sq_norms;               // L per-example squared gradient norms
  VectorX<Scalar> factors;                    // L clip factors c_r (0 for unused lanes)
};

// Every buffer a chunk of up to `capacity` examples needs, allocated once (no allocation per chunk or per
// example afterwards): ceil(capacity / L) groups.
template <typename Scalar>
struct ChunkScratch {
  ChunkScratch(const CnnGeometry& geometry, int64_t capacity);

  // Logit `cls` of example `example` of the loaded chunk (after Forward).
  Scalar logit(int64_t example, int cls) const {
    constexpr int L = Lanes<Scalar>::kCount;
    return groups[example / L].dense_out.back()[int64_t{cls} * L + example % L];
  }

  int64_t capacity = 0;
  int64_t count = 0;  // examples loaded by CnnNetwork::Load
  std::vector<GroupScratch<Scalar>> groups;
};

struct ChunkClipResult {
  int64_t clipped = 0;    // examples with ||∇f_r|| > C
  double norm_sum = 0.0;  // Σ_r ||∇f_r||
  double loss_sum = 0.0;  // Σ_r f_r (before the update)
};

template <typename Scalar>
class CnnNetwork {
 public:
  CnnNetwork(CnnGeometry geometry, Activation activation, Pooling pooling);

  const CnnGeometry& geometry() const { return geometry_; }

  // Copies rows `rows` of `data` (dense CHW rows matching geometry().input; labels < classes) into
  // scratch; rows.size() ≤ scratch.capacity.
  void Load(const data::Dataset& data, std::span<const int64_t> rows, ChunkScratch<Scalar>& scratch) const;

  // Asks for the cache lines of rows `rows` of `data` to be brought towards this core (L2) without waiting:
  // called with the next chunk's rows while this one computes, so its Load finds them near (random
  // batches scatter rows over a data set larger than the caches).
  void Prefetch(const data::Dataset& data, std::span<const int64_t> rows) const;

  // Forward pass over the loaded chunk. Logits: scratch.logit(r, c).
  void Forward(const Scalar* params, ChunkScratch<Scalar>& scratch) const;

  // Loss of the loaded chunk after Forward; `losses` (count entries) may be null.
  SoftmaxSummary Loss(const ChunkScratch<Scalar>& scratch, Scalar* losses) const;

  // Forward + backward over the loaded chunk: partial (num_params) = Σ_r clip_C(∇f_r), the clipped
  // per-example gradients summed (docs/theory.md §2), group by group: partial = ((g_0 + g_1) + ...)
  // with g_i group i's sum; accumulate = true adds the groups to partial's values instead
  // (((partial + g_0) + g_1) + ...). `norms` (count entries, may be null) receives each pre-clip norm
  // ||∇f_r||. clip = +infinity disables clipping.
  ChunkClipResult ClippedGradient(const Scalar* params, double clip, Scalar* partial, Scalar* norms,
                                  ChunkScratch<Scalar>& scratch, bool accumulate = false) const;

 private:
  void ForwardGroup(const Scalar* params, GroupScratch<Scalar>& s) const;
  // Backpropagates from the logit gradient in dense_grad.back(): fills dense_grad, conv_grads and sq_norms.
  void BackwardGroup(const Scalar* params, GroupScratch<Scalar>& s) const;

  CnnGeometry geometry_;
  Activation activation_;
  Pooling pooling_;
};

extern template struct GroupScratch<float>;
extern template struct GroupScratch<double>;
extern template struct ChunkScratch<float>;
extern template struct ChunkScratch<double>;
extern template class CnnNetwork<float>;
extern template class CnnNetwork<double>;

}  // namespace asyncdp::models::cnn
