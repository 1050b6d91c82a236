#include "core/accounting/pld/pld_prefix.h"

#include <utility>

namespace asyncdp::accounting {

using pld_detail::Channel;
using pld_detail::Complex;

PldPrefixComposer::PldPrefixComposer(const Schedule& whole, SamplingModel sampling, const PldOptions& options,
                                     int64_t max_spectrum_bytes) {
  PldOptions upper_only = options;
  upper_only.compute_lower_bound = false;
  pld_detail::Prepared prepared = pld_detail::Prepare(whole, sampling, upper_only, false);
  if (prepared.empty) return;
  groups_ = CompactSchedule(whole);
  const int64_t n = int64_t{1} << prepared.log2_size;
  if (static_cast<int64_t>(groups_.size()) * n * 16 > max_spectrum_bytes || prepared.channels.size() != 2) return;
  discretization_ = prepared.discretization;
  tail_mass_ = prepared.tail_mass;
  log2_size_ = prepared.log2_size;
  const FftPlan& plan = plan_.emplace(log2_size_);
  Channel& a = prepared.channels[0];
  Channel& b = prepared.channels[1];
  for (size_t g = 0; g < groups_.size(); ++g) spectra_.push_back(pld_detail::Spectrum(plan, a.pmfs[g], &b.pmfs[g]));
  for (Channel& c : prepared.channels) {
    for (DiscretePld& d : c.pmfs) std::vector<double>().swap(d.pmf);
    shells_.push_back(std::move(c));
  }
  stored_ = true;
}

std::optional<ComposedPld> PldPrefixComposer::Compose(const Schedule& part) const {
  Workspace workspace;
  if (Compose(part, workspace) == nullptr) return std::nullopt;
  return std::move(workspace.composed);
}

const ComposedPld* PldPrefixComposer::Compose(const Schedule& part, Workspace& workspace) const {
  if (!stored_) return nullptr;
  ValidateSchedule(part);
  std::vector<int64_t> counts(groups_.size(), 0);
  for (const RoundGroup& p : CompactSchedule(part)) {
    size_t g = 0;
    while (g < groups_.size() && !(groups_[g].q == p.q && groups_[g].sigma == p.sigma)) ++g;
    if (g == groups_.size() || counts[g] + p.count > groups_[g].count) return nullptr;
    counts[g] += p.count;
  }
  ComposedPld& out = workspace.composed;
  out.discretization_ = discretization_;
  out.tail_mass_ = tail_mass_;
  out.fft_size_ = int64_t{1} << log2_size_;
  out.lower_.clear();
  out.upper_.resize(shells_.size());
  bool any = false;
  for (int64_t c : counts) any = any || c > 0;
  if (!any) {
    // No rounds: the loss is 0 with certainty, delta(eps) = 0 for eps >= 0.
    for (ComposedPld::Distribution& d : out.upper_) d = {0, {1.0}, 0.0, 0.0};
    out.fft_size_ = 1;
    return &out;
  }
  Channel a = shells_[0];
  Channel b = shells_[1];
  a.counts = counts;
  b.counts = counts;
  pld_detail::ChooseWindow(a, discretization_, tail_mass_);
  pld_detail::ChooseWindow(b, discretization_, tail_mass_);
  for (const Channel* c : {&a, &b}) {
    if (c->window_hi - c->window_lo + 1 > out.fft_size_) return nullptr;
  }
  const FftPlan& plan = *plan_;
  workspace.product_a.assign(plan.size(), 1.0);
  workspace.product_b.assign(plan.size(), 1.0);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (counts[g] > 0) {
      pld_detail::Accumulate(spectra_[g], counts[g], counts[g], workspace.product_a, workspace.product_b);
    }
  }
  pld_detail::Finish(plan, workspace.product_a, workspace.product_b, a, &b, out.upper_[0], &out.upper_[1]);
  return &out;
}

}  // namespace asyncdp::accounting
