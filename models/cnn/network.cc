#include "models/cnn/network.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/check.h"
#include "core/clipping.h"
#include "models/cnn/activation.h"
#include "models/cnn/conv_lanes.h"
#include "models/cnn/dense.h"
#include "models/cnn/pool.h"

namespace asyncdp::models::cnn {
namespace {

template <typename Scalar>
constexpr int kL = Lanes<Scalar>::kCount;

// Where conv l's pooled, activated output goes: the interior of conv l + 1's padded input, or (last
// conv) the dense layers' flat input — [C][H/2][W/2][L] row-major positions, i.e. feature c·P + p.
template <typename Scalar>
StridedLanes<Scalar> PooledOutput(const CnnGeometry& geometry, size_t l, VectorX<Scalar>& next_in,
                                  VectorX<Scalar>& flat) {
  const ConvGeometry& g = geometry.convs[l];
  constexpr int L = kL<Scalar>;
  if (l + 1 == geometry.convs.size()) {
    return {flat.data(), g.pooled_positions() * L, int64_t{g.pooled_width()} * L};
  }
  const ConvGeometry& next = geometry.convs[l + 1];
  const ConvLanesShape<Scalar> shape(next);
  return {next_in.data() + next.padding * shape.in_row + next.padding * L, shape.in_plane, shape.in_row};
}

// dst[i·L + r] = src[r][offset + i] for i < n ≤ L, r < L (0 where src[r] is null).
template <typename Scalar>
void TransposeBlock(const float* const* src, int64_t offset, int n, Scalar* dst) {
  constexpr int L = kL<Scalar>;
  if constexpr (std::is_same_v<Scalar, float>) {
    // (GCC warns that __m512's alignment attribute is dropped in the template argument; harmless here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
    Eigen::internal::PacketBlock<lanes::Packet<float>, L> block;
#pragma GCC diagnostic pop
    for (int r = 0; r < L; ++r) {
      if (src[r] == nullptr) {
        block.packet[r] = lanes::Zero<float>();
      } else {
        block.packet[r] = n == L ? lanes::Load(src[r] + offset) : lanes::LoadPartial(src[r] + offset, n);
      }
    }
    Eigen::internal::ptranspose(block);
    for (int i = 0; i < n; ++i) lanes::Store(dst + i * L, block.packet[i]);
  } else {
    for (int i = 0; i < n; ++i) {
      for (int r = 0; r < L; ++r) dst[i * L + r] = src[r] == nullptr ? Scalar{0} : static_cast<Scalar>(src[r][offset + i]);
    }
  }
}

// Asks for every cache line of a dense row without waiting: kLocality 3 (all cache levels) for rows about to
// be read, 2 (L2 and beyond) for the next chunk's.
template <int kLocality>
void PrefetchRow(const float* row, int64_t cols) {
  for (int64_t b = 0; b < cols; b += 64 / int64_t{sizeof(float)}) __builtin_prefetch(row + b, 0, kLocality);
}

}  // namespace

template <typename Scalar>
GroupScratch<Scalar>::GroupScratch(const CnnGeometry& geometry) {
  constexpr int L = kL<Scalar>;
  labels.assign(L, 0);
  for (size_t l = 0; l < geometry.convs.size(); ++l) {
    const ConvGeometry& g = geometry.convs[l];
    const ConvLanesShape<Scalar> shape(g);
    conv_in.push_back(VectorX<Scalar>::Zero(g.in_channels * shape.in_plane));  // the border stays zero
    conv_pre.emplace_back(g.out_channels * shape.out_plane);
    pool_codes.emplace_back(g.output_size() * L);
    conv_in_grad.emplace_back(l == 0 ? 0 : g.input_size() * L);
    conv_grads.emplace_back(g.num_params() * L);
  }
  flat.resize(geometry.dense.front().in_features * L);
  flat_grad.resize(flat.size());
  int64_t widest = 0;
  for (const DenseGeometry& g : geometry.dense) {
    dense_out.emplace_back(g.out_features * L);
    dense_grad.emplace_back(g.out_features * L);
    widest = std::max<int64_t>(widest, g.out_features);
  }
  transposed.resize((widest + L - 1) / L * L * L);
  sq_norms.resize(L);
  factors.resize(L);
}

template <typename Scalar>
ChunkScratch<Scalar>::ChunkScratch(const CnnGeometry& geometry, int64_t capacity_in) : capacity(capacity_in) {
  ASYNCDP_CHECK(capacity > 0);
  const int64_t group_count = (capacity + kL<Scalar> - 1) / kL<Scalar>;
  groups.reserve(group_count);
  for (int64_t i = 0; i < group_count; ++i) groups.emplace_back(geometry);
}

template <typename Scalar>
CnnNetwork<Scalar>::CnnNetwork(CnnGeometry geometry, Activation activation, Pooling pooling)
    : geometry_(std::move(geometry)), activation_(activation), pooling_(pooling) {}

template <typename Scalar>
void CnnNetwork<Scalar>::Prefetch(const data::Dataset& data, std::span<const int64_t> rows) const {
  const int64_t cols = data.dense.cols();
  for (const int64_t row : rows) {
    if (row < 0 || row >= data.rows()) continue;  // Load reports it
    PrefetchRow<2>(data.dense.data() + row * cols, cols);
  }
}

template <typename Scalar>
void CnnNetwork<Scalar>::Load(const data::Dataset& data, std::span<const int64_t> rows,
                              ChunkScratch<Scalar>& scratch) const {
  constexpr int L = kL<Scalar>;
  const int64_t count = static_cast<int64_t>(rows.size());
  ASYNCDP_CHECK(count >= 1 && count <= scratch.capacity);
  ASYNCDP_CHECK(!data.is_sparse && data.dense.cols() == geometry_.input_size());
  const ConvGeometry& g = geometry_.convs.front();
  const ConvLanesShape<Scalar> shape(g);
  const int height = g.in_height, width = g.in_width, pad = g.padding;
  for (size_t gi = 0; gi < scratch.groups.size(); ++gi) {
    GroupScratch<Scalar>& s = scratch.groups[gi];
    const int64_t first = static_cast<int64_t>(gi) * L;
    s.count = static_cast<int>(std::clamp<int64_t>(count - first, 0, L));
    if (s.count == 0) continue;
    Scalar* in = s.conv_in.front().data();
    const float* src[L];  // lane r's image, or null (zeros) for unused lanes
    for (int r = 0; r < L; ++r) {
      src[r] = nullptr;
      s.labels[r] = 0;
      if (r >= s.count) continue;
      const int64_t row = rows[first + r];
      ASYNCDP_CHECK(row >= 0 && row < data.rows());
      src[r] = data.dense.data() + row * data.dense.cols();
      // Rows are scattered over the data set (random batches): ask for all their cache lines at once so
      // the misses overlap instead of arriving one transpose block at a time.
      PrefetchRow<3>(src[r], geometry_.input_size());
      const int32_t label = data.labels[row];
      ASYNCDP_CHECK(label >= 0 && label < geometry_.classes());
      s.labels[r] = label;
    }
    // Dataset rows are CHW; lane r of pixel (c, y, x) goes to ((c·H_p + y + p)·W_p + x + p)·L + r: each
    // image line is transposed in L × L blocks (L images × L pixels).
    for (int c = 0; c < g.in_channels; ++c) {
      for (int y = 0; y < height; ++y) {
        const int64_t line = (int64_t{c} * height + y) * width;
        Scalar* dst = in + c * shape.in_plane + (y + pad) * shape.in_row + pad * L;
        for (int x0 = 0; x0 < width; x0 += L) {
          const int n = std::min(L, width - x0);
          TransposeBlock(src, line + x0, n, dst + x0 * L);
        }
      }
    }
  }
  scratch.count = count;
}

template <typename Scalar>
void CnnNetwork<Scalar>::ForwardGroup(const Scalar* params, GroupScratch<Scalar>& s) const {
  for (size_t l = 0; l < geometry_.convs.size(); ++l) {
    const ConvGeometry& g = geometry_.convs[l];
    ConvForward(g, params, s.conv_in[l].data(), s.conv_pre[l].data());
    VectorX<Scalar>& next_in = l + 1 < s.conv_in.size() ? s.conv_in[l + 1] : s.flat;
    PoolForward(pooling_, activation_, g.out_channels, g.out_height, g.out_width, s.conv_pre[l].data(),
                s.pool_codes[l].data(), PooledOutput(geometry_, l, next_in, s.flat));
  }
  const Scalar* dense_in = s.flat.data();
  for (size_t l = 0; l < geometry_.dense.size(); ++l) {
    const DenseGeometry& g = geometry_.dense[l];
    DenseForward(g, params, dense_in, s.dense_out[l].data());
    if (l + 1 < geometry_.dense.size()) {
      ActivationForward(activation_, int64_t{g.out_features} * kL<Scalar>, s.dense_out[l].data());
    }
    dense_in = s.dense_out[l].data();
  }
}

template <typename Scalar>
void CnnNetwork<Scalar>::Forward(const Scalar* params, ChunkScratch<Scalar>& scratch) const {
  for (GroupScratch<Scalar>& s : scratch.groups) {
    if (s.count > 0) ForwardGroup(params, s);
  }
}

template <typename Scalar>
SoftmaxSummary CnnNetwork<Scalar>::Loss(const ChunkScratch<Scalar>& scratch, Scalar* losses) const {
  SoftmaxSummary total;
  int64_t first = 0;
  for (const GroupScratch<Scalar>& s : scratch.groups) {
    if (s.count == 0) continue;
    const SoftmaxSummary part =
        SoftmaxCrossEntropy<Scalar>(geometry_.classes(), s.count, s.dense_out.back().data(), s.labels.data(),
                                    losses == nullptr ? nullptr : losses + first, nullptr);
    total.loss_sum += part.loss_sum;
    total.correct += part.correct;
    first += s.count;
  }
  return total;
}

template <typename Scalar>
void CnnNetwork<Scalar>::BackwardGroup(const Scalar* params, GroupScratch<Scalar>& s) const {
  constexpr int L = kL<Scalar>;
  std::fill(s.sq_norms.begin(), s.sq_norms.end(), 0.0);
  for (size_t l = geometry_.dense.size(); l-- > 0;) {
    const DenseGeometry& g = geometry_.dense[l];
    const Scalar* in = l == 0 ? s.flat.data() : s.dense_out[l - 1].data();
    Scalar* in_grad = l == 0 ? s.flat_grad.data() : s.dense_grad[l - 1].data();
    DenseAddExampleSqNorms(g, in, s.dense_grad[l].data(), s.sq_norms.data());
    DenseInputGradient(g, params, s.dense_grad[l].data(), in_grad);
    if (l > 0) ActivationBackward(activation_, int64_t{g.in_features} * L, in, in_grad);
  }
  for (size_t l = geometry_.convs.size(); l-- > 0;) {
    const ConvGeometry& g = geometry_.convs[l];
    // g_out: gradient of the pooled, activated output (the flat input's for the last conv).
    Scalar* out_grad = l + 1 == geometry_.convs.size() ? s.flat_grad.data() : s.conv_in_grad[l + 1].data();
    VectorX<Scalar>& next_in = l + 1 < s.conv_in.size() ? s.conv_in[l + 1] : s.flat;
    // δ = gradient of the convolution output z, written over z (conv_pre).
    PoolBackward(pooling_, activation_, g.out_channels, g.out_height, g.out_width,
                 PooledOutput(geometry_, l, next_in, s.flat), s.pool_codes[l].data(), out_grad,
                 s.conv_pre[l].data());
    ConvWeightGradients(g, s.conv_in[l].data(), s.conv_pre[l].data(), s.conv_grads[l].data());
    // Squared norms, lane-wise, in blocks of 256 parameters (float partial sums never run over more than 256
    // terms), each block's float sum added to the double norm in block order. Four blocks' chains run
    // interleaved: one chain of dependent multiply-adds waited 4 cycles per packet (perf, Intel Xeon); each
    // block's sum is still formed in the same order, so the norms are the same bits.
    const Scalar* grads = s.conv_grads[l].data();
    const int64_t n = g.num_params();
    constexpr int64_t kBlock = 256;
    constexpr int kChains = 4;
    for (int64_t p0 = 0; p0 < n; p0 += kChains * kBlock) {
      lanes::Packet<Scalar> sum[kChains];
      int64_t end[kChains];
      for (int b = 0; b < kChains; ++b) {
        sum[b] = lanes::Zero<Scalar>();
        end[b] = std::min(n, p0 + (b + 1) * kBlock);
      }
      for (int64_t q = 0; q < kBlock; ++q) {
        for (int b = 0; b < kChains; ++b) {
          const int64_t p = p0 + b * kBlock + q;
          if (p < end[b]) {
            const auto v = lanes::Load(grads + p * L);
            sum[b] = lanes::Fma(v, v, sum[b]);
          }
        }
      }
      for (int b = 0; b < kChains && p0 + b * kBlock < n; ++b) {
        Scalar block[L];
        lanes::Store(block, sum[b]);
        for (int r = 0; r < L; ++r) s.sq_norms[r] += static_cast<double>(block[r]);
      }
    }
    if (l > 0) ConvInputGradient(g, params, s.conv_pre[l].data(), s.conv_in_grad[l].data());
  }
}

template <typename Scalar>
ChunkClipResult CnnNetwork<Scalar>::ClippedGradient(const Scalar* params, double clip, Scalar* partial,
                                                    Scalar* norms, ChunkScratch<Scalar>& scratch,
                                                    bool accumulate) const {
  constexpr int L = kL<Scalar>;
  ChunkClipResult result;
  int64_t first = 0;
  for (GroupScratch<Scalar>& s : scratch.groups) {
    if (s.count == 0) continue;
    ForwardGroup(params, s);
    const SoftmaxSummary loss = SoftmaxCrossEntropy<Scalar>(geometry_.classes(), s.count,
                                                            s.dense_out.back().data(), s.labels.data(),
                                                            nullptr, s.dense_grad.back().data());
    BackwardGroup(params, s);
    result.loss_sum += loss.loss_sum;
    for (int r = 0; r < L; ++r) {
      if (r >= s.count) {
        s.factors[r] = Scalar{0};  // unused lane
        continue;
      }
      const double norm = std::sqrt(s.sq_norms[r]);
      const double factor = ClipFactor(norm, clip);  // min(1, C / ||∇f_r||), §2.1
      s.factors[r] = static_cast<Scalar>(factor);
      if (factor < 1.0) ++result.clipped;
      result.norm_sum += norm;
      if (norms != nullptr) norms[first + r] = static_cast<Scalar>(norm);
    }
    const auto factors = lanes::Load(s.factors.data());
    for (size_t l = 0; l < geometry_.convs.size(); ++l) {
      const ConvGeometry& g = geometry_.convs[l];
      const Scalar* grads = s.conv_grads[l].data();
      Scalar* out = partial + g.weight_offset;
      // Σ_r c_r G_r(p): L parameters at a time (lanes::HorizontalSums, the same bits as one at a time).
      const int64_t n = g.num_params();
      int64_t p = 0;
      for (; p + L <= n; p += L) {
        lanes::Packet<Scalar> scaled[L];
        for (int q = 0; q < L; ++q) scaled[q] = lanes::Mul(lanes::Load(grads + (p + q) * L), factors);
        Scalar sums[L];
        lanes::HorizontalSums<Scalar>(scaled, sums);
        for (int q = 0; q < L; ++q) out[p + q] = accumulate ? out[p + q] + sums[q] : sums[q];
      }
      for (; p < n; ++p) {
        const Scalar sum = lanes::HorizontalSum<Scalar>(lanes::Mul(lanes::Load(grads + p * L), factors));
        out[p] = accumulate ? out[p] + sum : sum;
      }
    }
    for (size_t l = 0; l < geometry_.dense.size(); ++l) {
      const Scalar* in = l == 0 ? s.flat.data() : s.dense_out[l - 1].data();
      DenseClippedSum(geometry_.dense[l], in, s.factors.data(), s.dense_grad[l].data(), s.transposed.data(),
                      accumulate, partial);
    }
    first += s.count;
    accumulate = true;
  }
  if (!accumulate) std::fill(partial, partial + geometry_.num_params, Scalar{0});  // no examples
  return result;
}

template struct GroupScratch<float>;
template struct GroupScratch<double>;
template struct ChunkScratch<float>;
template struct ChunkScratch<double>;
template class CnnNetwork<float>;
template class CnnNetwork<double>;

}  // namespace asyncdp::models::cnn
