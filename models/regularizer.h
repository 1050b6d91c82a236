// The L2 (ridge) regulariser of the strongly convex objective (Section 4 and Appendix D, objectives; docs/theory.md §2, (9)):
//
//   J_hat = J + (lambda/2) ||w_bar||^2,   w_bar = (w, b)
//
// DP-SGD clips per-example gradients, so the regulariser must be split over examples and its gradient is
// part of every per-example gradient BEFORE clipping. The paper does not say how; the spec note of §8.2
// gives two readings, both offered here:
//
//   kPerExample (default; SAG convention, strong-convexity modulus lambda):
//       f(w_bar; x, y) = loss(w_bar; x, y) + (lambda/2)     ||w_bar_reg||^2
//   kLiteral (J_hat literally: regulariser once for the whole sum):
//       f(w_bar; x, y) = loss(w_bar; x, y) + (lambda/(2N)) ||w_bar_reg||^2
//
// Both are f = loss + (mu/2) ||w_bar_reg||^2 with mu = PerExampleL2Coefficient(...), so each per-example
// gradient is grad loss + mu * w_bar_reg. w_bar_reg = w_bar (Section 4) or, with regularize_bias = false,
// w with the bias coordinates zeroed (Appendix D's ||w||^2; spec §10 item 10).
#pragma once

#include <cstdint>
#include <string_view>

namespace asyncdp::models {

enum class RegularizerConvention {
  kPerExample,  // (lambda/2) ||w_bar||^2 in each per-example loss
  kLiteral,     // (lambda/(2N)) ||w_bar||^2 in each per-example loss, N = records of the client's data
};

std::string_view ToString(RegularizerConvention convention);  // "per_example" / "literal"
// Throws ConfigError(key_path, ...) for other names.
RegularizerConvention ParseRegularizerConvention(std::string_view name,
                                                 std::string_view key_path = "model.regularizer_convention");

struct L2Options {
  // lambda >= 0; 0 disables the regulariser. The paper uses lambda = 1/N (Table 1); resolving "1/N" is the
  // caller's job, this takes the number.
  double lambda = 0.0;
  RegularizerConvention convention = RegularizerConvention::kPerExample;
  // N of the kLiteral convention (the client's record count); must be > 0 when lambda > 0 and the
  // convention is kLiteral; ignored otherwise.
  int64_t num_records = 0;
  // Regularise the bias too (||w_bar||^2, Section 4). false = ||w||^2 (Appendix D).
  bool regularize_bias = true;
};

// mu of f = loss + (mu/2) ||w_bar_reg||^2: lambda (kPerExample) or lambda / N (kLiteral). Pure.
double PerExampleL2Coefficient(const L2Options& options);

// Throws ConfigError("model.l2_lambda" / "model.regularizer_num_records", ...) for invalid values.
void ValidateL2Options(const L2Options& options);

}  // namespace asyncdp::models
