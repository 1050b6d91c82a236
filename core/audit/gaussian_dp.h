// mu-Gaussian differential privacy (Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS-B) as the
// audit uses it: the (eps, delta) profile of a mu-GDP mechanism, and the GDP parameter that an observed
// (FPR, FNR) pair refutes. Written apart from core/accounting (the audit must share no code with what it
// checks).
//
// A mechanism is mu-GDP when every test between neighbouring inputs has FNR >= G_mu(FPR) with the
// trade-off function G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) (Dong et al. Definition 2.6): testing N(0, 1)
// against N(mu, 1). Its privacy profile is (Corollary 2.13)
//
//   delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
#pragma once

namespace asyncdp::audit {

// delta(eps) of a mu-GDP mechanism, mu > 0, eps >= 0 (computed as Phi(a) - exp(eps + ln Phi(b)), so
// large eps neither overflows nor cancels to a negative value).
double GdpDelta(double mu, double epsilon);

// The smallest eps >= 0 with GdpDelta(mu, eps) <= delta, for mu >= 0 and delta in (0, 1), returned as
// the LOWER end of a final bracket of width 1e-12 (so that a lower bound fed through it stays one).
double GdpEpsilon(double mu, double delta);

// The GDP parameter refuted by a test whose error rates are at most (fpr, fnr):
//   mu >= Phi^{-1}(1 - fpr) - Phi^{-1}(fnr) = -Phi^{-1}(fpr) - Phi^{-1}(fnr).
// Why: if the mechanism is mu*-GDP then fnr >= FNR_true >= G_mu*(FPR_true) >= G_mu*(fpr) (G is
// decreasing), i.e. Phi(Phi^{-1}(1 - fpr) - mu*) <= fnr; solving for mu* gives the bound (Nasr et al.
// 2023, "Tight auditing of differentially private machine learning", the GDP-based estimate, with Dong et al.
// eq. (6)). Clamped at 0; fpr, fnr in [0, 1] (0 gives +inf, i.e. no mu-GDP claim survives a perfect test).
double GdpMuRefuted(double fpr, double fnr);

}  // namespace asyncdp::audit
