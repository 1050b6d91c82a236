#include "sim/headline_epsilon.h"

#include <fmt/format.h>

#include <cmath>

namespace asyncdp::sim {

std::optional<double> FiniteOrNone(double epsilon) {
  return std::isfinite(epsilon) ? std::optional<double>(epsilon) : std::nullopt;
}

nlohmann::json HeadlineJson(const std::vector<HeadlineEpsilon>& headline) {
  auto value = [](const HeadlineEpsilon& h) {
    return h.epsilon ? nlohmann::json(*h.epsilon) : nlohmann::json(nullptr);
  };
  nlohmann::json out = nlohmann::json::object();
  for (const HeadlineEpsilon& h : headline) out[h.accountant] = value(h);
  return out;
}

std::string HeadlineText(const std::vector<HeadlineEpsilon>& headline) {
  std::string text;
  for (const HeadlineEpsilon& h : headline) {
    if (h.lower_bound) continue;
    if (!text.empty()) text += " / ";
    text += h.accountant + " ";
    text += h.epsilon ? fmt::format("{:.4g}", *h.epsilon) : std::string("none");
  }
  return text.empty() ? "none" : text;
}

}  // namespace asyncdp::sim
