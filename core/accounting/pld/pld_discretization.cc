#include "core/accounting/pld/pld_discretization.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/accounting/log_math.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {

// Losses beyond +-700 nats are outside double's exp range; such mass is sent to +infinity (upper bound)
// or dropped (lower bound), which is what it does to delta anyway.
constexpr double kMaxLoss = 700.0;
constexpr int64_t kMaxGridPoints = int64_t{1} << 28;

// Adds P-mass `mass` at grid index `index` of a PMF being built left to right.
void Deposit(DiscretePld& out, int64_t index, double mass) {
  if (out.pmf.empty()) out.offset = index;
  ASYNCDP_CHECK(index >= out.offset);
  const auto position = static_cast<size_t>(index - out.offset);
  if (position >= out.pmf.size()) out.pmf.resize(position + 1, 0.0);
  out.pmf[position] += mass;
}

}  // namespace

DiscretePld DiscretizeConnectTheDots(const PrivacyLossPair& pair, double delta_loss, double tail) {
  ASYNCDP_CHECK(delta_loss > 0.0 && tail > 0.0);
  const double loss_lo = std::max(pair.Loss(pair.PLowerQuantileBound(tail)), -kMaxLoss);
  const double loss_hi = std::min(pair.Loss(pair.PUpperQuantileBound(tail)), kMaxLoss);
  const auto i_lo = static_cast<int64_t>(std::floor(loss_lo / delta_loss));
  const auto i_hi = std::max(static_cast<int64_t>(std::ceil(loss_hi / delta_loss)), i_lo + 1);
  ASYNCDP_CHECK_MSG(i_hi - i_lo < kMaxGridPoints, "PLD grid too fine for this round");
  DiscretePld out;
  out.offset = i_lo;
  out.pmf.assign(static_cast<size_t>(i_hi - i_lo + 1), 0.0);
  const double growth = std::exp(delta_loss);
  const double growth_minus_1 = std::expm1(delta_loss);

  PrivacyLossPair::Edge previous = pair.MakeEdge(pair.InverseLoss(i_lo * delta_loss));
  // Below the grid: move the mass up to the first point (raising losses only increases delta).
  out.pmf[0] += pair.PMass(pair.MakeEdge(-kInf), previous);
  for (int64_t i = i_lo; i < i_hi; ++i) {
    const PrivacyLossPair::Edge next = pair.MakeEdge(pair.InverseLoss((i + 1) * delta_loss));
    const double dp = pair.PMass(previous, next);
    const double dq = pair.QMass(previous, next);
    // Split preserving P and Q mass: up + down = dp, up e^{-(i+1)D} + down e^{-iD} = dq.
    const double u = std::exp(i * delta_loss);
    const double up = std::clamp(growth * (dp - u * dq) / growth_minus_1, 0.0, dp);
    out.pmf[static_cast<size_t>(i - i_lo)] += dp - up;
    out.pmf[static_cast<size_t>(i + 1 - i_lo)] += up;
    previous = next;
  }
  out.infinity_mass = pair.PMass(previous, pair.MakeEdge(kInf));
  return out;
}

DiscretePld DiscretizeByPooling(const PrivacyLossPair& pair, double delta_loss, double tail) {
  ASYNCDP_CHECK(delta_loss > 0.0 && tail > 0.0);
  // Pools are built from the top (highest loss) down, so that every pool in the tail, where delta(eps) is
  // decided, hits its grid ratio exactly; only the low-loss remainder at the bottom is rounded down.
  double x_top = pair.PUpperQuantileBound(tail);  // P-mass above is dropped
  if (pair.Loss(x_top) > kMaxLoss) x_top = pair.InverseLoss(kMaxLoss);
  double x_bottom = pair.PLowerQuantileBound(tail);  // P-mass below is dropped
  if (pair.Loss(x_bottom) < -kMaxLoss) x_bottom = pair.InverseLoss(-kMaxLoss);
  const PrivacyLossPair::Edge bottom = pair.MakeEdge(x_bottom);
  std::vector<std::pair<int64_t, double>> pools;  // (grid index, P-mass), in decreasing index order
  PrivacyLossPair::Edge b = pair.MakeEdge(x_top);
  double loss_b = pair.Loss(x_top);
  while (b.x > x_bottom) {
    const double p_rest = pair.PMass(bottom, b);
    const double q_rest = pair.QMass(bottom, b);
    if (p_rest <= 0.0) break;
    // The largest grid point below loss_b, and not within rounding of it: where L is affine and the
    // densities log-linear (far tails), pools are mirror-symmetric and their edges fall on grid points, so
    // a target equal to loss_b up to an ulp would give an empty pool.
    const int64_t j = static_cast<int64_t>(std::ceil(loss_b / delta_loss - 1e-9)) - 1;
    const double g = j * delta_loss;
    const double ratio = std::exp(g);
    const double x_g = pair.InverseLoss(g);
    // Everything left as one last pool, its loss (the pooled likelihood ratio) rounded down to the grid:
    // merging outcomes is post-processing and lowering a loss lowers delta(eps), so the result stays a
    // lower bound.
    const auto pool_the_rest = [&] {
      const double pooled = std::log(p_rest) - std::log(q_rest);  // +inf when q_rest = 0
      // Clamped to [-kMaxLoss, g]: lowering a loss keeps the lower bound (and the index representable).
      const double lowest = std::floor(-kMaxLoss / delta_loss);
      double index = std::floor(pooled / delta_loss);
      if (!(index < static_cast<double>(j))) index = static_cast<double>(j);
      if (!(index > lowest)) index = lowest;
      pools.emplace_back(static_cast<int64_t>(index), p_rest);
    };
    if (x_g <= x_bottom || p_rest - ratio * q_rest >= 0.0) {
      pool_the_rest();  // everything left pools to a likelihood ratio of at least e^g
      break;
    }
    // H(a) = P((a, b]) - e^g Q((a, b]) rises as a goes down from b to x_g (loss > g there) and falls
    // below x_g, ending negative at x_bottom: one root in (x_bottom, x_g). Safeguarded Newton from the
    // mirror image of b about g; accepted once H >= 0 with H / P((a, b]) <= 1e-6 Delta, i.e. the pool's
    // loss lies in [g, g + 1e-6 Delta], so rounding it down to g lowers it by at most that.
    auto gap_at = [&](const PrivacyLossPair::Edge& a, double& pool_mass) {
      pool_mass = pair.PMass(a, b);
      return pool_mass - ratio * pair.QMass(a, b);
    };
    double lo = x_bottom;  // H < 0
    double hi = x_g;       // H > 0
    double a = pair.InverseLoss(std::max(2.0 * g - loss_b, g - delta_loss));
    if (!(a > lo && a < hi)) a = 0.5 * (lo + hi);
    PrivacyLossPair::Edge edge_a;
    double pool_mass = 0.0;
    for (int iteration = 0;; ++iteration) {
      edge_a = pair.MakeEdge(a);
      const double gap = gap_at(edge_a, pool_mass);
      if (gap >= 0.0) {
        if (gap <= 1e-6 * delta_loss * pool_mass) break;
        hi = a;
      } else {
        lo = a;
      }
      // Converged to rounding level, or out of iterations (H is only known to ~1e-16 of the masses):
      // take the bracket's end where H >= 0. That pool's loss is >= g, so rounding it down to g keeps the
      // result a lower bound, only less tight.
      if (iteration >= 400 || hi - lo <= 1e-15 * std::max(1.0, std::abs(hi))) {
        a = hi;
        edge_a = pair.MakeEdge(a);
        gap_at(edge_a, pool_mass);
        break;
      }
      const double slope = ratio * pair.QDensity(a) - pair.PDensity(a);  // dH/da > 0 below x_g
      const double next = (slope > 0.0) ? a - gap / slope : lo;
      a = (next > lo && next < hi) ? next : 0.5 * (lo + hi);
    }
    if (!(a < b.x)) {
      // No pool of positive width at rounding level (masses of ~1e-16 of the total, e.g. q = 1e-9): the
      // loop would not advance. Pool the rest instead (a lower bound, as above).
      pool_the_rest();
      break;
    }
    pools.emplace_back(j, pool_mass);
    b = edge_a;
    loss_b = pair.Loss(a);
  }
  DiscretePld out;
  for (auto it = pools.rbegin(); it != pools.rend(); ++it) Deposit(out, it->first, it->second);
  return out;
}

}  // namespace asyncdp::accounting
