// TrainConfig: every knob of an `asyncdp train` run, with its unit and default. One source of truth: the
// field registry (ConfigFields) binds each dotted TOML key to a member, its documentation and its
// validation, and drives TOML parsing, `--set key=value`, config.resolved.toml and docs/config.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounting/assumptions.h"
#include "core/accounting/proactive/proactive.h"
#include "core/privacy_assumptions.h"
#include "core/step_size.h"
#include "data/partition.h"
#include "models/cnn/cnn_options.h"
#include "models/regularizer.h"
#include "sim/checkin/checkin_kinds.h"
#include "sim/config_enum.h"
#include "sim/protocol/delay_rule.h"
#include "sim/protocol/server_step.h"
#include "sim/runtime/runtime_kinds.h"

namespace asyncdp::sim {

// Enumerated keys (sim/config_enum.h: parsed once into these, compared as enums everywhere after).
enum class ClipMode : uint8_t { kFixed, kAdaptive };             // dp.clip_mode
enum class PrivacyUnit : uint8_t { kRecord, kClient };           // dp.unit
enum class SampleSizes : uint8_t { kConstant, kList, kLinear };  // schedule.sample_sizes
enum class Participation : uint8_t { kAsyncRounds, kCheckIn };   // protocol.participation
enum class SpeedModel : uint8_t { kConstant, kLognormal };       // clients.speed
enum class EnforceMode : uint8_t { kAllUpperBounds, kDpAccountant };  // targets.enforce
template <>
struct EnumNames<ClipMode> {
  static constexpr std::array<std::string_view, 2> kNames{"fixed", "adaptive"};
};
template <>
struct EnumNames<PrivacyUnit> {
  static constexpr std::array<std::string_view, 2> kNames{"record", "client"};
};
template <>
struct EnumNames<SampleSizes> {
  static constexpr std::array<std::string_view, 3> kNames{"constant", "list", "linear"};
};
template <>
struct EnumNames<Participation> {
  static constexpr std::array<std::string_view, 2> kNames{"async_rounds", "check_in"};
};
template <>
struct EnumNames<SpeedModel> {
  static constexpr std::array<std::string_view, 2> kNames{"constant", "lognormal"};
};
template <>
struct EnumNames<EnforceMode> {
  static constexpr std::array<std::string_view, 2> kNames{"all_upper_bounds", "dp_accountant"};
};

// Enumerated keys whose enums live in core and data (names in enumerator order).
template <>
struct EnumNames<data::PartitionScheme> {  // data.partition
  static constexpr std::array<std::string_view, 2> kNames{"iid", "dirichlet"};
};
template <>
struct EnumNames<SamplingModel> {  // dp.sampling
  static constexpr std::array<std::string_view, 4> kNames{"poisson", "fixed_size_without_replacement",
                                                          "shuffle", "random_allocation"};
};
template <>
struct EnumNames<StepSizeSchedule> {  // schedule.step_rule
  static constexpr std::array<std::string_view, 3> kNames{"constant", "inverse_linear", "inverse_sqrt"};
};

template <>
struct EnumNames<models::RegularizerConvention> {  // model.regularizer_convention
  static constexpr std::array<std::string_view, 2> kNames{"per_example", "literal"};
};
template <>
struct EnumNames<models::Activation> {  // model.activation
  static constexpr std::array<std::string_view, 2> kNames{"relu", "tanh"};
};

// dp.accountant: the accountant of calibration, budget halts and the running epsilon — the families that
// can do all three (the report shows every applicable one either way).
enum class RunAccountant : uint8_t { kPld, kRdp, kRandomAllocation };
template <>
struct EnumNames<RunAccountant> {
  static constexpr std::array<std::string_view, 3> kNames{"pld", "rdp", "random_allocation"};
};
inline accounting::AccountantKind ToAccountantKind(RunAccountant accountant) {
  switch (accountant) {
    case RunAccountant::kRdp:
      return accounting::AccountantKind::kRdp;
    case RunAccountant::kRandomAllocation:
      return accounting::AccountantKind::kRandomAllocation;
    case RunAccountant::kPld:
      break;
  }
  return accounting::AccountantKind::kPld;
}

struct DataConfig {
  std::string train;              // training file (LIBSVM, IDX images, CIFAR-10 .bin); required
  std::string test;               // test file; empty = hold out `test_fraction` of `train`
  std::string format = "auto";    // auto | libsvm | idx | cifar
  int64_t features = 0;           // declared feature count (LIBSVM); 0 = infer from the train file
  double test_fraction = 0.2;     // used only when `test` is empty
  data::PartitionScheme partition = data::PartitionScheme::kIid;  // iid | dirichlet (label skew)
  double dirichlet_alpha = 0.5;   // concentration for partition = dirichlet
  int64_t rows_per_client = 0;    // cap on each client's shard (N_c); 0 = all rows of its shard
  int64_t eval_rows = 0;          // cap on test rows used for evaluation; 0 = all
};

struct ModelConfig {
  std::string kind = "logistic_l2";  // logistic | logistic_l2 | linear | svm | softmax | mlp | lenet | alexnet
                                     // | geometric_median
  double l2_lambda = 0.0;  // λ of logistic_l2, 0 = 1/N_c (the paper's choice, Table 1); ridge λ, 0 = none
  models::RegularizerConvention regularizer_convention =
      models::RegularizerConvention::kPerExample;  // per_example (λ/2‖w̄‖² in each f) | literal (λ/(2N))
  bool regularize_bias = true;       // include b in ‖w̄‖² (Section 4) or not (Appendix D)
  std::vector<int64_t> hidden = {128};  // MLP hidden layer widths
  models::Activation activation = models::Activation::kRelu;  // relu | tanh (mlp, lenet, alexnet)
  int64_t threads = 1;               // oneTBB threads inside one batch (CNNs)
};

struct ClientsConfig {
  int64_t count = 5;                      // n, number of clients (Tables 1–5: 5)
  double gradient_cost = 1e-5;            // virtual seconds per per-example gradient
  SpeedModel speed = SpeedModel::kConstant;  // per-client speed factor
  double speed_sigma = 0.5;               // lognormal σ of the speed factor (median 1)
  LatencyModel latency = LatencyModel::kConstant;  // message latency model
  double latency_mean = 1e-3;             // virtual seconds (mean) per message
  std::vector<int64_t> straggler_ids;     // clients slowed down by `straggler_factor`
  double straggler_factor = 4.0;          // compute-time multiplier for stragglers
  std::vector<int64_t> dropout_ids;       // clients that stop (silently) at `dropout_round`
  int64_t dropout_round = 10;             // local round at which dropped clients stop
  std::vector<int64_t> delay_ids;         // clients whose messages get `delay_extra` more latency
  double delay_extra = 0.05;              // extra seconds (virtual, or wall in the threads runtime)
};

struct ProtocolConfig {
  RuntimeKind runtime = RuntimeKind::kVirtual;
  DelayRuleKind delay_rule = DelayRuleKind::kBounded;  // bounded: Υ(k,i) = k ≥ i − τ | unbounded: Υ ≡ true
  int64_t tau = 1;                   // τ of the bounded rule (0 = synchronous, 1 = the paper's default)
  double exclude_after = 0.0;        // server drops a client silent this long (seconds); 0 = never
  int64_t worker_threads = 0;        // virtual: threads computing rounds, 0 = auto; threads: worker pool, 0 = cores
  double mpi_timeout = 60.0;         // mpi runtime: a rank silent this long (seconds) ends the run with an error
  MpiPlacement mpi_placement = MpiPlacement::kBlock;  // mpi runtime (by planned work for balanced)
  // async_rounds: the Proactive-DP clients (each runs its own rounds); check_in: random check-ins of
  // Balle et al. 2020, one record per client ([checkin], sim/checkin/)
  Participation participation = Participation::kAsyncRounds;
  // Weight w of each applied update, v̂ ← v̂ − w·η̄_i·U (sim/protocol/server_step.h): full (w = 1, the
  // paper) | per_client (w = 1/n, FedAvg-like; the remedy for many clients). Post-processing: ε unchanged.
  ServerStep server_step = ServerStep::kFull;
  double staleness_exponent = 0.0;  // a of w ·= (1 + τ)^(−a), τ = update lag in global rounds (FedAsync); 0 = off
  bool allow_truncation = false;    // true: a truncated run exits 0 (it still reports truncated)
};

// Random check-ins (protocol.participation = "check_in"): n = clients.count clients, one record each.
struct CheckInConfig {
  checkin::Variant variant =
      checkin::Variant::kFixedWindow;  // fixed_window (Alg. 1) | averaged (Alg. 2) | sliding_window (§5)
  int64_t steps = 100;          // m: server steps per window (fixed/averaged); update steps (sliding)
  int64_t windows = 1;          // E: repetitions, each with fresh check-ins (fixed/averaged)
  double p0 = 1.0;              // check-in probability per window, in (0, 1]
  int64_t batch_steps = 1;      // b: steps accumulated per model update (fixed window)
  int64_t window_length = 100;  // W: sliding window length (client j's window is steps j .. j+W-1)
  int64_t warmup = -1;          // sliding: first update step; -1 = W - 1 (the first full window)
  checkin::StepRuleChoice step_rule =
      checkin::StepRuleChoice::kAuto;  // auto (by variant) | one_client | average
};

struct DpConfig {
  bool enabled = true;               // false = non-private baseline (no noise; clipping still applies)
  double clip = 0.1;                 // C, per-example L2 clipping norm (Tables 1–2)
  double sigma = 0.0;                // noise multiplier σ; 0 with epsilon > 0 = calibrate σ
  double epsilon = 0.0;              // target ε: calibrates σ (if sigma = 0) and halts at the budget
  double delta = 0.0;                // δ; 0 = 1/N_c (the paper's choice)
  std::vector<double> sigma_schedule;  // σ multipliers, piecewise over equal parts of the plan; empty = constant
  SamplingModel sampling =
      SamplingModel::kPoisson;  // poisson | fixed_size_without_replacement | shuffle | random_allocation
  // random_allocation: m rounds per allocation window (0 = derived: about k N_max / s rounds, adjusted so
  // that whole windows tile the longest plan) and k rounds per record per window.
  int64_t allocation_steps = 0;
  int64_t allocation_k = 1;
  // accountant for calibration, the budget halt and ε so far: pld | rdp | random_allocation (the only one
  // for dp.sampling = random_allocation)
  RunAccountant accountant = RunAccountant::kPld;
  bool halt_at_budget = true;        // with epsilon > 0: stop a client before it would exceed ε
  bool secure_noise = false;         // lattice + discrete Gaussian noise from OS entropy (needs rdp); not reproducible
  // Adaptive clipping (Andrew et al. 2021; docs/theory.md §2, "Adaptive clipping"): each client's C follows
  // the clip_quantile of its per-example gradient norms, C ← C·exp(−clip_lr (b̃ − clip_quantile)), b̃ the
  // noisy fraction of unclipped examples (count noise N(0, clip_count_sigma²)); dp.clip is the initial C.
  ClipMode clip_mode = ClipMode::kFixed;
  double clip_quantile = 0.5;
  double clip_lr = 0.2;
  double clip_count_sigma = 0.0;     // std of the count's noise (sensitivity 1); > 0 with DP
  // The unit of privacy (docs/theory.md §4, "User-level DP"): record (a record of a client's data set, the
  // paper's) or client (a client's whole data set: each round's update is clipped as a whole to client_clip
  // and noised N(0, σ² client_clip² I) by the client).
  PrivacyUnit unit = PrivacyUnit::kRecord;
  double client_clip = 0.0;          // C_u of unit = client
};

struct ScheduleConfig {
  SampleSizes sample_sizes = SampleSizes::kConstant;
  int64_t sample_size = 26;               // s for `constant`; s_0 for `linear`
  std::vector<int64_t> sample_size_list;  // s_0, s_1, ... for `list` (the last one repeats)
  double sample_size_slope = 0.0;         // s_i = round(s_0 + slope·i) for `linear`
  int64_t iterations = 0;                 // K, gradient computations per client; 0 = use epochs/rounds
  double epochs = 5.0;                    // K = epochs·N_c when iterations = 0 and rounds = 0
  int64_t rounds = 0;                     // T, local rounds per client (overrides K when > 0)
  StepSizeSchedule step_rule =
      StepSizeSchedule::kInverseLinear;  // inverse_linear: η0/(1+βt) | inverse_sqrt: η0/(1+β√t) | constant
  double eta0 = 0.1;                      // η0 (Tables 3–5)
  double beta = 0.001;                    // β (0.001 strongly convex; 0.01 plain convex/non-convex)
  bool divide_round_update_by_sample_size = false;  // docs/theory.md §2: default sums (no 1/s_i)
  // Rounds with s_i above this run at η(t_i)·cap/s_i (0 = off): the paper scales the step inversely with
  // large s_i, since a summed round moves the model by up to η·s_i·C (docs/theory.md §2, "Large batches").
  int64_t step_cap_sample_size = 0;
};

struct EvalConfig {
  int64_t points = 20;       // evaluations over the run (at evenly spaced global rounds), plus the end
  int64_t train_rows = 2000; // training rows used for the train-loss column; 0 = skip train loss
  // A result of `asyncdp reference-optimum` (its directory or summary.json) for this run's objective: adds
  // the diag_suboptimality and diag_distance_sq columns (F(ŵ) − F(w*), ||ŵ − w*||² over every shard).
  std::string reference_optimum;
  bool gradient_norm = false;  // adds diag_gradient_norm: ||∇F(ŵ)|| over the train_rows rows
};

struct OutputConfig {
  // Also write non-private diagnostics (batch sizes, clip statistics, train loss, held-out accuracies): off
  // by default, so every published number is covered by the reported ε or public by assumption.
  bool diagnostics = false;
  bool trace = false;       // write events.csv, the protocol's event trace (a diagnostic: arrival order)
};

// Per-client targets of the proactive framework (Appendix E, Figure 15; docs/theory.md §9). accuracy = 0: off.
struct TargetsConfig {
  double accuracy = 0.0;                // acc_target on the client's held-out rows, in (0, 1]
  double epsilon = 0.0;                 // eps_target, the a-priori budget (required with accuracy > 0)
  double delta = 0.0;                   // delta_target; 0 = 1/N_c per client
  std::vector<double> client_accuracy;  // per-client overrides (one per client, or empty)
  std::vector<double> client_epsilon;   // per-client overrides (one per client, or empty)
  double holdout_fraction = 0.2;        // of each shard, held out for the accuracy check
  EnforceMode enforce = EnforceMode::kAllUpperBounds;  // all_upper_bounds (rdp and pld) | dp_accountant
  // Private accuracy checks (sim/proactive/private_checks.h): the held-out accuracy is released through a
  // Gaussian mechanism with noise multiplier check_sigma (0 = calibrated to 5% of epsilon_target), at most
  // paused_checks re-checks while paused; holdout_public = true checks exactly (held-out rows public).
  double check_sigma = 0.0;
  int64_t paused_checks = 8;
  bool holdout_public = false;

  // The proactive framework runs: an accuracy target for every client or per client.
  bool on() const { return accuracy > 0 || !client_accuracy.empty(); }
};

// How each proactive phase's batch size and sigma are set (proactive.phase_sizing).
enum class PhaseSizing : uint8_t { kE1, kCalibrated };
template <>
struct EnumNames<PhaseSizing> {
  static constexpr std::array<std::string_view, 2> kNames{"e1", "calibrated"};
};
// The E.1 calculator's gamma (core/accounting/proactive/proactive.h), in enumerator order.
template <>
struct EnumNames<accounting::GammaMode> {
  static constexpr std::array<std::string_view, 2> kNames{"paper", "exact"};
};

// The phases and the budget allocation over them (Appendix E.1; docs/theory.md §6).
struct ProactiveConfig {
  PhaseSizing phase_sizing =
      PhaseSizing::kE1;  // e1 (E.1 calculator) | calibrated (σ_j = c·phase_sigmas_j, c for ε_target)
  std::vector<double> phase_sigmas = {8.0, 5.0};  // sigma_j; a first 0 = derive from (35)
  std::vector<double> phase_epochs = {0.2, 1.0};  // k_j = K_j / N_c
  accounting::GammaMode gamma_mode = accounting::GammaMode::kExact;  // paper | exact
};

// The canaries a training run's one-run audit plants (audit.canary); `asyncdp audit` has more kinds
// (sim/audit/audit_options.h, CanaryKind).
enum class TrainCanary : uint8_t { kDirac, kMislabelled };
template <>
struct EnumNames<TrainCanary> {
  static constexpr std::array<std::string_view, 2> kNames{"dirac", "mislabelled"};
};

// The one-run privacy audit attached to a training run (docs/audit.md, "Auditing a training run"):
// audit.canaries = m > 0 plants m canaries in client audit.client's data, each in with probability 1/2.
struct AuditConfig {
  int64_t canaries = 0;            // m; 0 = no audit (the run is unchanged)
  int64_t client = 0;              // the audited client
  TrainCanary canary =
      TrainCanary::kDirac;  // dirac (white-box gradient canary) | mislabelled (relabelled real records)
  double confidence = 0.95;        // of eps_lower and of the VIOLATION test
  double test_noise_scale = 1.0;   // test-only fault: the audited client adds this * sigma (1 = honest)
};

// Whether client `id` appears in a list of client ids (clients.straggler_ids, dropout_ids, delay_ids).
inline bool ListsClient(const std::vector<int64_t>& ids, int64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The keys the user wrote, in the two layers a configuration is made of: the base (a TOML file) and the
// overrides applied after it (--set, the Python module's keyword arguments; their order does not matter). A
// written key the run does not read is refused (sim/config_usage.h) — except a base key that the file alone
// reads and only the overrides left unread (`--set dp.enabled=false` on a DP configuration leaves its
// dp.sigma unread): a warning.
struct GivenKeys {
  std::vector<std::string> base;
  std::vector<std::string> overrides;
  // Base keys the file alone does not read (judged when it was parsed): refused. A base key that only the
  // overrides left unread is a warning; an override is judged against the whole configuration.
  std::vector<std::string> unread_in_base;

  void NoteBase(const std::string& key) { AddOnce(base, key); }
  void NoteOverride(const std::string& key) { AddOnce(overrides, key); }
  bool InBase(const std::string& key) const { return Contains(base, key); }
  bool InOverrides(const std::string& key) const { return Contains(overrides, key); }
  bool UnreadInBase(const std::string& key) const { return Contains(unread_in_base, key); }
  // Every written key, base first.
  std::vector<std::string> All() const {
    std::vector<std::string> all = base;
    all.insert(all.end(), overrides.begin(), overrides.end());
    return all;
  }

 private:
  static bool Contains(const std::vector<std::string>& keys, const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }
  static void AddOnce(std::vector<std::string>& keys, const std::string& key) {
    if (!Contains(keys, key)) keys.push_back(key);
  }
};

struct TrainConfig {
  DataConfig data;
  ModelConfig model;
  ClientsConfig clients;
  ProtocolConfig protocol;
  CheckInConfig checkin;
  DpConfig dp;
  ScheduleConfig schedule;
  EvalConfig eval;
  OutputConfig output;
  TargetsConfig targets;
  ProactiveConfig proactive;
  AuditConfig audit;
  uint64_t seed = 1;  // every random stream derives from it (docs/design.md)
  // The dotted keys the user wrote, by layer (not a setting; sim/config_usage.h says what they decide).
  GivenKeys given;
};

inline bool IsGivenKey(const TrainConfig& config, const std::string& key) {
  return config.given.InBase(key) || config.given.InOverrides(key);
}

}  // namespace asyncdp::sim
