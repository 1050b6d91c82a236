#include "sim/config_fields.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/factory.h"

namespace asyncdp::sim {
namespace {

// Ranges: each bound is where the simulator stops computing meaningfully (or finitely), far beyond any
// published setting, so a real experiment never meets them while inf, NaN, 1e308 and typos are refused.
constexpr NumericRange Closed(double min, double max) { return {min, max, false, false}; }
constexpr NumericRange LeftOpen(double min, double max) { return {min, max, true, false}; }
constexpr NumericRange RightOpen(double min, double max) { return {min, max, false, true}; }
constexpr NumericRange Open(double min, double max) { return {min, max, true, true}; }
// Counts and caps where any non-negative integer means something (a cap above the data = no cap).
constexpr NumericRange kAnyCount = Closed(0, std::numeric_limits<double>::infinity());
constexpr double kMaxClients = 10'000'000;  // the virtual runtime packs a client id into 24 bits
constexpr double kMaxFeatures = 2147483647;  // int32 CSR column indices (data/libsvm.h)
constexpr double kMaxSampleSize = 2147483647;
// A client's round plan holds every round a priori (Algorithm 2): 16 bytes a round, so 10^7 rounds is
// 160 MB per client. K above 10^9 gradient computations per client is beyond what a simulation finishes.
constexpr double kMaxRoundsPerClient = 1e7;
constexpr double kMaxIterationsPerClient = 1e9;
// One-run audit canaries: each is a row of the audited client (and, Dirac, one model parameter).
constexpr double kMaxAuditCanaries = 1e6;

}  // namespace

bool NumericRange::Contains(double value) const {
  if (std::isnan(value)) return false;
  if (std::isinf(value) && !std::isinf(max)) return false;
  const bool above_min = min_open ? value > min : value >= min;
  const bool below_max = max_open ? value < max : value <= max;
  return above_min && below_max;
}

std::string NumericRange::ToString() const {
  if (std::isinf(max)) return fmt::format("{} {}", min_open ? ">" : ">=", NumberText(min));
  return fmt::format("{}{}, {}{}", min_open ? "(" : "[", NumberText(min), NumberText(max), max_open ? ")" : "]");
}

std::string NumberText(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double magnitude = std::fabs(value);
  if (magnitude < 1e16 && value == std::trunc(value)) return fmt::format("{:.0f}", value);  // <= 16 digits
  if (magnitude >= 1e16 || magnitude < 1e-4) return fmt::format("{:.6g}", value);
  return fmt::format("{}", value);
}

void CheckNumberInRange(const ConfigField& field, double value, const std::string& where) {
  if (!field.range || field.range->Contains(value)) return;
  const bool is_double =
      std::holds_alternative<double*>(field.target) || std::holds_alternative<std::vector<double>*>(field.target);
  const bool is_list = std::holds_alternative<std::vector<int64_t>*>(field.target) ||
                       std::holds_alternative<std::vector<double>*>(field.target);
  const std::string bounds = field.range->ToString();
  const bool interval = bounds.front() == '[' || bounds.front() == '(';
  // The key leads the message unless it already is the location (ValidateConfig reports by key alone).
  const std::string key = where == field.key ? "" : field.key + ": ";
  throw ConfigError(where, fmt::format("{}{} must be {}{}{}, got {}", key, is_list ? "every element" : "the value",
                                       is_double ? "a finite number" : "an integer", interval ? " in " : " ", bounds,
                                       NumberText(value)));
}

void CheckFieldRange(const ConfigField& field, const std::string& where) {
  std::visit(
      [&](const auto& target) {
        using P = std::decay_t<decltype(target)>;
        if constexpr (std::is_pointer_v<P>) {  // (an enum's words are checked against its choices instead)
          using T = std::remove_pointer_t<P>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>) {
            for (auto v : *target) CheckNumberInRange(field, static_cast<double>(v), where);
          } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            CheckNumberInRange(field, static_cast<double>(*target), where);
          }
        }
      },
      field.target);
}

std::vector<ConfigField> ConfigFields(TrainConfig& c) {
  return {
      {"seed", &c.seed, "Master seed; every random stream is keyed by (seed, client, round, purpose).",
       kAnyCount},
      // [data]
      {"data.train", &c.data.train,
       "Training data file: LIBSVM text (.gz ok), IDX images, or CIFAR-10 .bin. A relative path is taken from "
       "the working directory, not from the configuration file's folder."},
      {"data.test", &c.data.test,
       "Test data file (a relative path: from the working directory); empty = hold out data.test_fraction of "
       "the training rows."},
      {"data.format", &c.data.format, "File format.", {"auto", "libsvm", "idx", "cifar"}},
      {"data.features", &c.data.features,
       "Declared feature count for LIBSVM files; 0 = infer from the training file.", Closed(0, kMaxFeatures)},
      {"data.test_fraction", &c.data.test_fraction, "Held-out fraction when data.test is empty, in (0, 1).",
       Open(0, 1)},
      {"data.partition", &c.data.partition, "How training rows are split into client shards."},
      {"data.dirichlet_alpha", &c.data.dirichlet_alpha,
       "Dirichlet concentration for label-skewed shards (smaller = more skew).", Closed(1e-4, 1e6)},
      {"data.rows_per_client", &c.data.rows_per_client,
       "Cap on each client's shard size N_c; 0 = the whole shard (train rows / clients).", kAnyCount},
      {"data.eval_rows", &c.data.eval_rows, "Cap on test rows used for evaluation; 0 = all.", kAnyCount},
      // [model]
      {"model.kind", &c.model.kind,
       "Model: logistic (plain convex), logistic_l2 (strongly convex), linear, svm, softmax, mlp, lenet "
       "(non-convex, 28x28x1), alexnet (32x32x3), geometric_median (convex, unsupervised: ||theta - x||); "
       "or a model registered by the program (models::RegisterModel, docs/models.md).",
       models::ModelKinds()},
      {"model.l2_lambda", &c.model.l2_lambda,
       "L2 coefficient lambda: logistic_l2's regulariser, 0 = 1/N_c (Table 1); "
       "a ridge penalty for linear, svm, softmax and mlp, 0 = none.",
       Closed(0, 1e6)},
      {"model.regularizer_convention", &c.model.regularizer_convention,
       "How lambda/2 ||w||^2 splits over examples (Section 4 and Appendix D, objectives; docs/theory.md §2): "
       "per_example puts it whole in each "
       "per-example loss (modulus lambda); literal puts lambda/(2N) in each."},
      {"model.regularize_bias", &c.model.regularize_bias, "Include the bias b in the L2 penalty."},
      {"model.hidden", &c.model.hidden, "MLP hidden layer widths, e.g. [128] or [256, 64].", Closed(1, 1e6)},
      {"model.activation", &c.model.activation, "Hidden activation of mlp/lenet/alexnet."},
      {"model.threads", &c.model.threads, "oneTBB threads inside one batch's gradient work (CNNs); >= 1.",
       Closed(1, 1024)},
      // [clients]
      {"clients.count", &c.clients.count, "Number of clients n (Tables 1-5 use 5).", Closed(1, kMaxClients)},
      {"clients.gradient_cost", &c.clients.gradient_cost,
       "Virtual runtime: seconds of virtual time per per-example gradient (times batch size and speed).",
       LeftOpen(0, 1e3)},
      {"clients.speed", &c.clients.speed,
       "Per-client compute-time factor: constant (1) or lognormal (median 1, clients.speed_sigma)."},
      {"clients.speed_sigma", &c.clients.speed_sigma, "Log-space std of the lognormal speed factor.",
       Closed(0, 10)},
      {"clients.latency", &c.clients.latency, "Message latency model (virtual runtime)."},
      {"clients.latency_mean", &c.clients.latency_mean, "Mean message latency in virtual seconds.",
       Closed(0, 1e6)},
      {"clients.straggler_ids", &c.clients.straggler_ids,
       "Client ids that compute straggler_factor times slower.", Closed(0, kMaxClients - 1)},
      {"clients.straggler_factor", &c.clients.straggler_factor, "Slow-down factor of stragglers (>= 1).",
       Closed(1, 1e6)},
      {"clients.dropout_ids", &c.clients.dropout_ids,
       "Client ids that stop silently at local round dropout_round (needs protocol.exclude_after > 0).",
       Closed(0, kMaxClients - 1)},
      {"clients.dropout_round", &c.clients.dropout_round, "Local round at which dropped clients stop.",
       kAnyCount},
      {"clients.delay_ids", &c.clients.delay_ids,
       "Client ids whose messages (updates and notices) reach the server delay_extra later; the client goes "
       "on computing (message latency, the same in the three runtimes).",
       Closed(0, kMaxClients - 1)},
      {"clients.delay_extra", &c.clients.delay_extra,
       "Extra message delay in seconds (virtual seconds, or wall seconds in the threads and mpi runtimes).",
       Closed(0, 1e6)},
      // [protocol]
      {"protocol.runtime", &c.protocol.runtime,
       "virtual: deterministic discrete-event clock (bit-reproducible); threads: clients as tasks on a "
       "pool of worker threads in wall time (protocol.worker_threads); mpi: rank 0 runs the server, ranks "
       "1..P-1 the clients as tasks on a pool of worker threads each (mpirun -np P, docs/mpi.md). Check-ins "
       "run on all three: threads computes each step's checked-in clients on worker threads, mpi on the "
       "ranks "
       "hosting them (rank 0 the server)."},
      {"protocol.delay_rule", &c.protocol.delay_rule,
       "Permissible-delay predicate: bounded = (k >= i - tau); unbounded = always true."},
      {"protocol.tau", &c.protocol.tau, "tau of the bounded rule: 0 synchronous, 1 the paper's default.",
       Closed(0, kMaxRoundsPerClient)},
      {"protocol.exclude_after", &c.protocol.exclude_after,
       "Server excludes a client that holds up the broadcast and is silent for this many seconds (virtual "
       "or wall; counted from when the newest model reached it or it was last heard) from the broadcast "
       "condition; heard from again, it is re-admitted; 0 = never.",
       Closed(0, 1e9)},
      {"protocol.worker_threads", &c.protocol.worker_threads,
       "Virtual runtime: threads computing client rounds (results do not depend on it); 0 = auto: all "
       "cores if a round's compute takes over 50 us (e.g. LeNet), else the event loop alone. Threads "
       "runtime: worker threads the clients run on as tasks (never more than the clients); 0 = one per "
       "core. MPI runtime: worker threads per rank its hosted clients run on as tasks; 0 = one per core of "
       "the rank's machine. Check-ins: threads and mpi runtimes, the threads a step's checked-in clients "
       "compute on (per rank); 0 = one per core.",
       Closed(0, 1024)},
      {"protocol.mpi_placement", &c.protocol.mpi_placement,
       "MPI runtime: how clients are placed on ranks 1..P-1: block (contiguous blocks), round_robin (client "
       "c "
       "on rank 1 + c mod (P-1)), balanced (by planned work, the sum of s_i, largest first onto the least "
       "loaded rank; for clients with unequal data or schedules). docs/mpi.md."},
      {"protocol.mpi_timeout", &c.protocol.mpi_timeout,
       "MPI runtime: seconds a rank may stay silent (it sends heartbeats while computing) before the run "
       "ends with an error (a dead or stalled rank); > 0.",
       LeftOpen(0, 1e6)},
      {"protocol.allow_truncation", &c.protocol.allow_truncation,
       "A run that ends with a client neither finished nor stopped by a rule (cut off after an exclusion, "
       "stalled) is truncated: summary.json says so (truncated, unfinished) and `asyncdp train` exits 4. "
       "true "
       "= exit 0 for such runs (they still say truncated)."},
      {"protocol.participation", &c.protocol.participation,
       "async_rounds: the Proactive-DP clients; check_in: random check-ins (Balle et al. 2020), one record "
       "per client (or, with dp.unit = client, one data set per client), configured in [checkin] "
       "(docs/random_allocation.md)."},
      {"protocol.server_step", &c.protocol.server_step,
       "Weight w of each applied update, v = v - w*eta_i*U: full = 1 (the paper's server); per_client = 1/n "
       "(n = clients.count; FedAvg-like averaging, the remedy when many clients' full steps add up and "
       "diverge). Post-processing of the released updates: epsilon is unchanged (docs/theory.md)."},
      {"protocol.staleness_exponent", &c.protocol.staleness_exponent,
       "a of the staleness weight (1 + tau)^(-a) that multiplies w (FedAsync, Xie et al. 2019), tau = global "
       "round at arrival minus the global round the update was computed on; 0 = off. Post-processing: "
       "epsilon is unchanged.",
       Closed(0, 10)},
      // [checkin]
      {"checkin.variant", &c.checkin.variant,
       "fixed_window: every client checks in to one uniform step of [m] (Alg. 1); averaged: the same "
       "check-ins, every checked-in client used, empty steps skipped (Alg. 2); sliding_window: client j's "
       "window is the W steps from its wake-up step j, updates from the warm-up on."},
      {"checkin.steps", &c.checkin.steps,
       "m: server steps per window (fixed_window, averaged) or update steps after the warm-up (sliding).",
       Closed(1, 1e9)},
      {"checkin.windows", &c.checkin.windows, "E: windows run one after another, fresh check-ins in each.",
       Closed(1, 1e6)},
      {"checkin.p0", &c.checkin.p0, "Probability that a client checks in to a window, in (0, 1].",
       LeftOpen(0, 1)},
      {"checkin.batch_steps", &c.checkin.batch_steps,
       "b: steps whose noisy updates are summed into one model update (ModelUpdate of Alg. 1).",
       Closed(1, 1e9)},
      {"checkin.window_length", &c.checkin.window_length, "W: sliding window length in steps.",
       Closed(1, 1e9)},
      {"checkin.warmup", &c.checkin.warmup,
       "Sliding window: first server update step; -1 = W - 1 (the first step every window can reach).",
       Closed(-1, 1e9)},
      {"checkin.step_rule", &c.checkin.step_rule,
       "Server rule per step: one_client (one uniform checked-in client, a dummy update when empty), "
       "average (all checked-in clients averaged, empty steps skipped); auto = one_client for fixed_window "
       "and sliding_window, average for averaged."},
      // [dp]
      {"dp.enabled", &c.dp.enabled, "false = non-private baseline: no noise (clipping still applies)."},
      {"dp.clip", &c.dp.clip, "C, per-example L2 clipping norm (Tables 1-2: 0.1 convex, 0.025 non-convex).",
       LeftOpen(0, 1e6)},
      {"dp.sigma", &c.dp.sigma,
       "Noise multiplier sigma: noise N(0, C^2 sigma^2 I) once per round. 0 with dp.epsilon > 0 = calibrate.",
       Closed(0, 1e6)},
      {"dp.epsilon", &c.dp.epsilon,
       "Target epsilon per client: calibrates sigma when dp.sigma = 0 and halts at the budget; 0 = none.",
       Closed(0, 1e3)},
      {"dp.delta", &c.dp.delta, "delta; 0 = 1/N_c (the paper's choice).", RightOpen(0, 1)},
      {"dp.sigma_schedule", &c.dp.sigma_schedule,
       "Noise allocation over the rounds: multipliers m_0, m_1, ... of sigma, piecewise constant over equal "
       "parts of each client's plan (one entry per round = a per-round list); round i of part j uses "
       "sigma * m_j. With dp.epsilon and dp.sigma = 0, sigma is calibrated for the whole heterogeneous plan. "
       "Empty = constant sigma. E.g. [2, 1.5, 1] decreasing noise, [1, 1.5, 2] increasing noise.",
       Closed(1e-6, 1e6)},
      {"dp.sampling", &c.dp.sampling,
       "Mini-batch sampling: poisson (rate s/N; add/remove neighbours, what the theorems assume), "
       "fixed_size_without_replacement (exactly s, the paper's pseudocode; replace-one), shuffle (epoch "
       "permutation; replace-one), random_allocation (balls in bins: every record joins dp.allocation_k "
       "uniformly chosen rounds of each window of dp.allocation_steps rounds; variable batches of mean "
       "N k / m; add/remove; needs dp.accountant = \"random_allocation\"; docs/theory.md)."},
      {"dp.allocation_steps", &c.dp.allocation_steps,
       "random_allocation: m, rounds per allocation window (the same for every client; a started window "
       "counts as whole); 0 = derived: E = max(1, round(T s / (k N_max))) windows tile the longest plan of "
       "T rounds, m = max(k, ceil(T / E)) (N_max the largest shard, s schedule.sample_size: an expected "
       "batch of about s). The resolved config records m.",
       Closed(0, 1e7)},
      {"dp.allocation_k", &c.dp.allocation_k,
       "random_allocation: k, rounds each record joins per window (1 <= k <= m).", Closed(1, 1e7)},
      {"dp.accountant", &c.dp.accountant,
       "Accountant that calibrates sigma, halts a client at its budget and gives the running epsilon: pld "
       "(the tightest upper bound) or rdp (looser; the only one for secure noise), random_allocation (the "
       "Feldman-Shenfeld bounds; required by, and only for, dp.sampling = \"random_allocation\"). Every "
       "accountant that covers the sampling is reported either way."},
      {"dp.halt_at_budget", &c.dp.halt_at_budget,
       "With dp.epsilon > 0: a client stops before a round that would exceed its budget (the round is "
       "computed from the public plan before training)."},
      {"dp.secure_noise", &c.dp.secure_noise,
       "Floating-point-safe noise: the clipped sum rounded to a lattice plus exact discrete Gaussian noise "
       "from OS entropy (never written out); batches drawn with an OS-random key. Not reproducible; "
       "accounted by rdp only (set dp.accountant = \"rdp\")."},
      {"dp.clip_mode", &c.dp.clip_mode,
       "fixed: every round clips to dp.clip. adaptive (Andrew et al. 2021): each client's C follows the "
       "dp.clip_quantile of its per-example gradient norms, estimated privately each round from the noisy "
       "count of unclipped examples, starting at dp.clip; the count is a second Gaussian release accounted "
       "with the gradient's (docs/theory.md §2, \"Adaptive clipping\")."},
      {"dp.clip_quantile", &c.dp.clip_quantile,
       "Target fraction of a round's examples left unclipped (adaptive clipping); Andrew et al.'s default "
       "0.5.",
       Closed(0, 1)},
      {"dp.clip_lr", &c.dp.clip_lr,
       "Learning rate of the geometric clip update C <- C exp(-clip_lr (b - clip_quantile)), b the noisy "
       "unclipped fraction (adaptive clipping); default 0.2.",
       LeftOpen(0, 100)},
      {"dp.clip_count_sigma", &c.dp.clip_count_sigma,
       "Standard deviation of the Gaussian noise on a round's count of unclipped examples (sensitivity 1; "
       "adaptive clipping). Required (> 0) with DP; the round is then accounted as one Gaussian mechanism of "
       "multiplier (sigma^-2 + clip_count_sigma^-2)^(-1/2).",
       Closed(0, 1e9)},
      {"dp.unit", &c.dp.unit,
       "Unit of privacy: record (neighbouring data sets differ in one record of one client: record-level DP, "
       "the "
       "paper's) or client (they differ in one client's whole data set: user-level DP; each round's update "
       "is "
       "clipped as a whole to dp.client_clip and noised N(0, sigma^2 client_clip^2 I) by the client, and a "
       "client's epsilon composes all its rounds without sampling amplification; with check-ins a checked-in "
       "client sends its whole data set's update, clipped to dp.client_clip, accounted by random check-ins "
       "over "
       "clients; docs/theory.md §4)."},
      {"dp.client_clip", &c.dp.client_clip,
       "C_u, the L2 norm a client's whole round update is clipped to with dp.unit = \"client\" (its records "
       "are "
       "still clipped to dp.clip first).",
       Closed(0, 1e9)},
      // [schedule]
      {"schedule.sample_sizes", &c.schedule.sample_sizes,
       "Sample-size sequence: constant (s), list (explicit, last repeats), linear (s_0 + slope i)."},
      {"schedule.sample_size", &c.schedule.sample_size, "s for constant sequences; s_0 for linear.",
       Closed(1, kMaxSampleSize)},
      {"schedule.sample_size_list", &c.schedule.sample_size_list, "Explicit s_0, s_1, ... for list.",
       Closed(1, kMaxSampleSize)},
      {"schedule.sample_size_slope", &c.schedule.sample_size_slope,
       "Per-round increase for linear (>= 0; a decreasing sequence: use list).", Closed(0, kMaxSampleSize)},
      {"schedule.iterations", &c.schedule.iterations,
       "K, gradient computations per client; 0 = epochs * N_c. Not read (a value > 0 is refused) when "
       "schedule.rounds > 0.",
       Closed(0, kMaxIterationsPerClient)},
      {"schedule.epochs", &c.schedule.epochs,
       "k = K/N_c, read only when schedule.iterations = 0 and rounds = 0 (written otherwise, refused).",
       LeftOpen(0, 1e6)},
      {"schedule.rounds", &c.schedule.rounds,
       "T, local rounds per client; > 0 fixes T, and K (iterations, epochs) is not read.",
       Closed(0, kMaxRoundsPerClient)},
      {"schedule.step_rule", &c.schedule.step_rule,
       "Round step size eta_bar_i = eta(t_i), t_i = sum_{j<i} s_j (docs/theory.md §2): inverse_linear "
       "= eta0/(1+beta t), inverse_sqrt = eta0/(1+beta sqrt t), constant = eta0."},
      {"schedule.eta0", &c.schedule.eta0, "eta0, initial step size (Tables 3-5: 0.1).", LeftOpen(0, 1e4)},
      {"schedule.beta", &c.schedule.beta,
       "beta of the diminishing schedules (0.001 strongly convex, 0.01 else).", Closed(0, 1e6)},
      {"schedule.divide_round_update_by_sample_size", &c.schedule.divide_round_update_by_sample_size,
       "Scale a round's update by 1/s_i (docs/theory.md §2; default false = sum, as the paper)."},
      {"schedule.step_cap_sample_size", &c.schedule.step_cap_sample_size,
       "Rounds with s_i above this value run at eta(t_i) * cap / s_i, so a summed round of many examples "
       "moves the model no further than one of cap examples (the paper scales the step inversely with large "
       "s_i; docs/theory.md §2, \"Large batches\"); 0 = off.",
       Closed(0, kMaxSampleSize)},
      // [targets] (proactive framework, Appendix E, Figure 15; docs/theory.md §9, "Proactive phases")
      {"targets.accuracy", &c.targets.accuracy,
       "Accuracy target of every client on its held-out rows, in (0, 1]; > 0 turns on the proactive phases "
       "(proactive.*); 0 = off.",
       Closed(0, 1)},
      {"targets.epsilon", &c.targets.epsilon,
       "Privacy budget epsilon_target of every client: never exceeded by the E.1 analysis nor by any "
       "upper-bound accountant (rdp, pld). Required with targets.accuracy.",
       Closed(0, 1e3)},
      {"targets.delta", &c.targets.delta, "delta_target; 0 = 1/N_c of each client (the paper's choice).",
       RightOpen(0, 1)},
      {"targets.client_accuracy", &c.targets.client_accuracy,
       "Per-client accuracy targets overriding targets.accuracy (one per client, or empty).", LeftOpen(0, 1)},
      {"targets.client_epsilon", &c.targets.client_epsilon,
       "Per-client epsilon_target overriding targets.epsilon (one per client, or empty).", LeftOpen(0, 1e3)},
      {"targets.holdout_fraction", &c.targets.holdout_fraction,
       "Fraction of each client's shard held out for its accuracy check, in (0, 1); not part of the data "
       "set its epsilon protects.",
       Open(0, 1)},
      {"targets.enforce", &c.targets.enforce,
       "Accountants under which epsilon_target is never exceeded: all_upper_bounds (rdp and pld; the safe "
       "default) or dp_accountant only (e.g. pld, so a calibrated plan spends exactly epsilon_target under "
       "the tight accountant; rdp may then report more)."},
      {"targets.check_sigma", &c.targets.check_sigma,
       "Noise multiplier of the private accuracy checks: each check releases the held-out accuracy plus "
       "N(0, (check_sigma / (n_holdout - 1))^2); 0 = calibrated so that all of a client's planned checks "
       "cost "
       "5% of its epsilon_target under PLD (the phases get the rest; docs/theory.md, private accuracy "
       "checks).",
       Closed(0, 1e7)},
      {"targets.paused_checks", &c.targets.paused_checks,
       "Re-checks of a paused client at most: it checks the models of global rounds that are multiples of "
       "ceil(T_max / paused_checks), so the planned checks (one per phase plus these) are fixed before "
       "training.",
       Closed(1, 1e6)},
      {"targets.holdout_public", &c.targets.holdout_public,
       "true: exact accuracy checks; the held-out rows are then public by assumption and not covered by any "
       "epsilon (the pause pattern depends on them). false (default): private checks (targets.check_sigma)."},
      // [proactive]
      {"proactive.phase_sizing", &c.proactive.phase_sizing,
       "How each phase's batch size and sigma are set: e1 = the paper's E.1 calculator picks s_j for the "
       "given sigma_j (Theorem B.4), and the tight accountants halt at targets.epsilon; calibrated = "
       "schedule.sample_size in every phase and sigma_j = c * proactive.phase_sigmas[j], c calibrated by "
       "dp.accountant so that running every phase spends exactly targets.epsilon (budget allocation over "
       "phases, docs/theory.md)."},
      {"proactive.phase_sigmas", &c.proactive.phase_sigmas,
       "sigma_j of each phase, decreasing (e1: absolute, a first entry of 0 = derive sigma_0 from (35), E.1 "
       "case j = 0; calibrated: relative). From the utility graph (asyncdp utility-graph) or given directly.",
       Closed(0, 1e6)},
      {"proactive.phase_epochs", &c.proactive.phase_epochs,
       "k_j = K_j / N_c, the gradient computations of each phase in epochs (one entry per phase).",
       LeftOpen(0, 1e6)},
      {"proactive.gamma_mode", &c.proactive.gamma_mode,
       "gamma of the E.1 calculator: paper (one-sided fixed point, as the paper's calculators) or exact "
       "(the smallest solution)."},
      // [eval]
      {"eval.points", &c.eval.points,
       "Number of evaluations, at evenly spaced global rounds (plus the end), at most one per global round "
       "(more than the run's rounds evaluates every round); 0 = only at the end.",
       Closed(0, 1e6)},
      {"eval.train_rows", &c.eval.train_rows, "Training rows for the train-loss column; 0 = skip.",
       kAnyCount},
      {"eval.reference_optimum", &c.eval.reference_optimum,
       "Result of `asyncdp reference-optimum` for this run's objective (directory or its summary.json); adds "
       "the non-private diagnostics diag_suboptimality = F(w) - F(w*) over every shard and diag_distance_sq "
       "= ||w - w*||^2 to metrics.csv. Empty = none."},
      {"eval.gradient_norm", &c.eval.gradient_norm,
       "Add the non-private diagnostic diag_gradient_norm = ||grad F(w)|| (full, unclipped) over the "
       "eval.train_rows rows to metrics.csv: what non-convex SGD bounds control."},
      // [audit] (docs/audit.md, "Auditing a training run")
      {"audit.canaries", &c.audit.canaries,
       "m, canaries of the one-run privacy audit (Steinke, Nasr & Jagielski 2023) planted in client "
       "audit.client's data, each included with probability 1/2 (by the run's seed); they are part of the "
       "training data the run accounts (Poisson: N_c grows by the included canaries; fixed-size and shuffle: "
       "each replaces one of the client's records). Adds summary.json \"audit\" and exits 3 on VIOLATION. "
       "0 = no audit.",
       Closed(0, kMaxAuditCanaries)},
      {"audit.client", &c.audit.client, "The audited client, in [0, clients.count).",
       Closed(0, kMaxClients - 1)},
      {"audit.canary", &c.audit.canary,
       "dirac = white-box gradient canaries (a test-only model wrapper gives each its own parameter; the "
       "observer sees every update of the client) | mislabelled = copies of the client's records with "
       "another "
       "label (the realistic view: the observer sees the final model only)."},
      {"audit.confidence", &c.audit.confidence, "Confidence of eps_lower and of the VIOLATION test.",
       Open(0, 1)},
      {"audit.test_noise_scale", &c.audit.test_noise_scale,
       "Test-only fault injection: the audited client adds test_noise_scale * sigma while every accountant "
       "accounts sigma, so the audit must report VIOLATION. 1 = honest; never change it for a real run.",
       LeftOpen(0, 1)},
      // [output]
      {"output.diagnostics", &c.output.diagnostics,
       "Also write non-private diagnostics (realised batch sizes and gradient counts, clip statistics, "
       "train loss, held-out accuracies of the proactive framework): summary.json \"diagnostics\", diag_* "
       "CSV "
       "columns. No accountant covers them, so they are off by default (the log says so once when on); "
       "docs/design.md lists every released field with its status."},
      {"output.trace", &c.output.trace,
       "Write events.csv: the protocol's event trace (every applied update with its client, local round, "
       "computed-at and applied-at global round; every broadcast and exclusion, in server order), to check a "
       "run's protocol invariants from its outputs. A diagnostic: the arrival order reflects compute times, "
       "not covered by epsilon. Async rounds only."},
  };
}

ConfigField* FindField(std::vector<ConfigField>& fields, const std::string& key) {
  for (auto& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::string FieldValueText(const ConfigField& field) {
  return std::visit(
      [](const auto& target) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(target)>, EnumBinding>) {
          return fmt::format("\"{}\"", target.Get());
        } else {
          const auto* p = target;
          using T = std::decay_t<decltype(*p)>;
          if constexpr (std::is_same_v<T, std::string>) {
            return fmt::format("\"{}\"", *p);
          } else if constexpr (std::is_same_v<T, bool>) {
            return *p ? "true" : "false";
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            return fmt::format("[{}]", fmt::join(*p, ", "));
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            std::vector<double> values(*p);
            for (double& v : values) v += 0.0;  // -0.0 as 0, as below
            return fmt::format("[{}]", fmt::join(values, ", "));
          } else if constexpr (std::is_same_v<T, double>) {
            // -0.0 is written as 0: "-0" reads back as the integer 0 and is then written "0", so a resolved
            // configuration holding -0.0 did not round-trip (found by fuzz/fuzz_config.cc: l2_lambda = -0.0).
            return fmt::format("{}", *p + 0.0);
          } else {
            return fmt::format("{}", *p);
          }
        }
      },
      field.target);
}

}  // namespace asyncdp::sim
