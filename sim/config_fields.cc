#include "sim/config_fields.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace asyncdp::sim {

std::vector<ConfigField> ConfigFields(TrainConfig& c) {
  return {
      {"seed", &c.seed, "Master seed; every random stream is keyed by (seed, client, round, purpose)."},
      // [data]
      {"data.train", &c.data.train, "Training data file: LIBSVM text (.gz ok), IDX images, or CIFAR-10 .bin."},
      {"data.test", &c.data.test, "Test data file; empty = hold out data.test_fraction of the training rows."},
      {"data.format", &c.data.format, "File format.", {"auto", "libsvm", "idx", "cifar"}},
      {"data.features", &c.data.features,
       "Declared feature count for LIBSVM files; 0 = infer from the training file."},
      {"data.test_fraction", &c.data.test_fraction, "Held-out fraction when data.test is empty, in (0, 1)."},
      {"data.partition", &c.data.partition, "How training rows are split into client shards.",
       {"iid", "dirichlet"}},
      {"data.dirichlet_alpha", &c.data.dirichlet_alpha,
       "Dirichlet concentration for label-skewed shards (smaller = more skew)."},
      {"data.rows_per_client", &c.data.rows_per_client,
       "Cap on each client's shard size N_c; 0 = the whole shard (train rows / clients)."},
      {"data.eval_rows", &c.data.eval_rows, "Cap on test rows used for evaluation; 0 = all."},
      // [model]
      {"model.kind", &c.model.kind,
       "Model: logistic (plain convex), logistic_l2 (strongly convex), linear, svm, softmax, mlp, lenet "
       "(non-convex, 28x28x1), alexnet (32x32x3).",
       {"logistic", "logistic_l2", "linear", "svm", "softmax", "mlp", "lenet", "alexnet"}},
      {"model.l2_lambda", &c.model.l2_lambda, "Regulariser lambda of logistic_l2; 0 = 1/N_c (Table 1)."},
      {"model.regularizer_convention", &c.model.regularizer_convention,
       "How lambda/2 ||w||^2 splits over examples (proactive-dp.md 8.2): per_example puts it whole in each "
       "per-example loss (modulus lambda); literal puts lambda/(2N) in each.",
       {"per_example", "literal"}},
      {"model.regularize_bias", &c.model.regularize_bias, "Include the bias b in the L2 penalty."},
      {"model.hidden", &c.model.hidden, "MLP hidden layer widths, e.g. [128] or [256, 64]."},
      {"model.activation", &c.model.activation, "Hidden activation of mlp/lenet/alexnet.", {"relu", "tanh"}},
      {"model.threads", &c.model.threads, "oneTBB threads inside one batch's gradient work (CNNs); >= 1."},
      // [clients]
      {"clients.count", &c.clients.count, "Number of clients n (Tables 1-5 use 5)."},
      {"clients.gradient_cost", &c.clients.gradient_cost,
       "Virtual runtime: seconds of virtual time per per-example gradient (times batch size and speed)."},
      {"clients.speed", &c.clients.speed,
       "Per-client compute-time factor: constant (1) or lognormal (median 1, clients.speed_sigma).",
       {"constant", "lognormal"}},
      {"clients.speed_sigma", &c.clients.speed_sigma, "Log-space std of the lognormal speed factor."},
      {"clients.latency", &c.clients.latency, "Message latency model (virtual runtime).",
       {"constant", "exponential"}},
      {"clients.latency_mean", &c.clients.latency_mean, "Mean message latency in virtual seconds."},
      {"clients.straggler_ids", &c.clients.straggler_ids, "Client ids that compute straggler_factor times slower."},
      {"clients.straggler_factor", &c.clients.straggler_factor, "Slow-down factor of stragglers (>= 1)."},
      {"clients.dropout_ids", &c.clients.dropout_ids,
       "Client ids that stop silently at local round dropout_round (needs protocol.exclude_after > 0)."},
      {"clients.dropout_round", &c.clients.dropout_round, "Local round at which dropped clients stop."},
      {"clients.delay_ids", &c.clients.delay_ids, "Client ids whose messages take delay_extra longer."},
      {"clients.delay_extra", &c.clients.delay_extra,
       "Extra message delay in seconds (virtual seconds, or wall seconds in the threads runtime)."},
      // [protocol]
      {"protocol.runtime", &c.protocol.runtime,
       "virtual: deterministic discrete-event clock (bit-reproducible); threads: one thread per client plus "
       "a server thread.",
       {"virtual", "threads"}},
      {"protocol.delay_rule", &c.protocol.delay_rule,
       "Permissible-delay predicate: bounded = (k >= i - tau); unbounded = always true.",
       {"bounded", "unbounded"}},
      {"protocol.tau", &c.protocol.tau, "tau of the bounded rule: 0 synchronous, 1 the paper's default."},
      {"protocol.exclude_after", &c.protocol.exclude_after,
       "Server excludes a client silent for this many seconds (virtual or wall) from the broadcast "
       "condition; 0 = never."},
      {"protocol.worker_threads", &c.protocol.worker_threads,
       "Virtual runtime: threads computing client rounds (results do not depend on it); 0 = auto: all "
       "cores if a round's compute takes over 50 us (e.g. LeNet), else the event loop alone."},
      {"protocol.participation", &c.protocol.participation,
       "async_rounds: the Proactive-DP clients; check_in: random check-ins (Balle et al. 2020), one record "
       "per client, configured in [checkin] (docs/random_allocation.md).",
       {"async_rounds", "check_in"}},
      // [checkin]
      {"checkin.variant", &c.checkin.variant,
       "fixed_window: every client checks in to one uniform step of [m] (Alg. 1); averaged: the same "
       "check-ins, every checked-in client used, empty steps skipped (Alg. 2); sliding_window: client j's "
       "window is the W steps from its wake-up step j, updates from the warm-up on.",
       {"fixed_window", "averaged", "sliding_window"}},
      {"checkin.steps", &c.checkin.steps,
       "m: server steps per window (fixed_window, averaged) or update steps after the warm-up (sliding)."},
      {"checkin.windows", &c.checkin.windows, "E: windows run one after another, fresh check-ins in each."},
      {"checkin.p0", &c.checkin.p0, "Probability that a client checks in to a window, in (0, 1]."},
      {"checkin.batch_steps", &c.checkin.batch_steps,
       "b: steps whose noisy updates are summed into one model update (ModelUpdate of Alg. 1)."},
      {"checkin.window_length", &c.checkin.window_length, "W: sliding window length in steps."},
      {"checkin.warmup", &c.checkin.warmup,
       "Sliding window: first server update step; -1 = W - 1 (the first step every window can reach)."},
      {"checkin.step_rule", &c.checkin.step_rule,
       "Server rule per step: one_client (one uniform checked-in client, a dummy update when empty), "
       "average (all checked-in clients averaged, empty steps skipped); auto = one_client for fixed_window "
       "and sliding_window, average for averaged.",
       {"auto", "one_client", "average"}},
      // [dp]
      {"dp.enabled", &c.dp.enabled, "false = non-private baseline: no noise (clipping still applies)."},
      {"dp.clip", &c.dp.clip, "C, per-example L2 clipping norm (Tables 1-2: 0.1 convex, 0.025 non-convex)."},
      {"dp.sigma", &c.dp.sigma,
       "Noise multiplier sigma: noise N(0, C^2 sigma^2 I) once per round. 0 with dp.epsilon > 0 = calibrate."},
      {"dp.epsilon", &c.dp.epsilon,
       "Target epsilon per client: calibrates sigma when dp.sigma = 0 and halts at the budget; 0 = none."},
      {"dp.delta", &c.dp.delta, "delta; 0 = 1/N_c (the paper's choice)."},
      {"dp.sampling", &c.dp.sampling,
       "Mini-batch sampling: poisson (rate s/N; add/remove neighbours, what the theorems assume), "
       "fixed_size_without_replacement (exactly s, the paper's pseudocode; replace-one), shuffle (epoch "
       "permutation; replace-one).",
       {"poisson", "fixed_size_without_replacement", "shuffle"}},
      {"dp.accountant", &c.dp.accountant,
       "Accountant that calibrates sigma, halts a client at its budget and gives the running epsilon: pld "
       "(the tightest upper bound) or rdp (looser; the only one for secure noise). Every accountant is "
       "reported either way.",
       {"pld", "rdp"}},
      {"dp.halt_at_budget", &c.dp.halt_at_budget,
       "With dp.epsilon > 0: a client stops before a round that would exceed its budget (the round is "
       "computed from the public plan before training)."},
      {"dp.secure_noise", &c.dp.secure_noise,
       "Floating-point-safe noise: the clipped sum rounded to a lattice plus exact discrete Gaussian noise "
       "from OS entropy (never written out); batches drawn with an OS-random key. Not reproducible; "
       "accounted by rdp only (set dp.accountant = \"rdp\")."},
      // [schedule]
      {"schedule.sample_sizes", &c.schedule.sample_sizes,
       "Sample-size sequence: constant (s), list (explicit, last repeats), linear (s_0 + slope i).",
       {"constant", "list", "linear"}},
      {"schedule.sample_size", &c.schedule.sample_size, "s for constant sequences; s_0 for linear."},
      {"schedule.sample_size_list", &c.schedule.sample_size_list, "Explicit s_0, s_1, ... for list."},
      {"schedule.sample_size_slope", &c.schedule.sample_size_slope, "Per-round increase for linear."},
      {"schedule.iterations", &c.schedule.iterations,
       "K, gradient computations per client; 0 = epochs * N_c (or schedule.rounds)."},
      {"schedule.epochs", &c.schedule.epochs, "k = K/N_c when schedule.iterations = 0 and rounds = 0."},
      {"schedule.rounds", &c.schedule.rounds, "T, local rounds per client; > 0 overrides K."},
      {"schedule.step_rule", &c.schedule.step_rule,
       "Round step size eta_bar_i = eta(t_i), t_i = sum_{j<i} s_j (proactive-dp.md 2.3): inverse_linear "
       "= eta0/(1+beta t), inverse_sqrt = eta0/(1+beta sqrt t), constant = eta0.",
       {"inverse_linear", "inverse_sqrt", "constant"}},
      {"schedule.eta0", &c.schedule.eta0, "eta0, initial step size (Tables 3-5: 0.1)."},
      {"schedule.beta", &c.schedule.beta, "beta of the diminishing schedules (0.001 strongly convex, 0.01 else)."},
      {"schedule.divide_round_update_by_sample_size", &c.schedule.divide_round_update_by_sample_size,
       "Scale a round's update by 1/s_i (proactive-dp.md 2.5; default false = sum, as the paper)."},
      // [eval]
      {"eval.points", &c.eval.points, "Number of evaluations, at evenly spaced global rounds (plus the end); 0 = only at the end."},
      {"eval.train_rows", &c.eval.train_rows, "Training rows for the train-loss column; 0 = skip."},
      // [output]
      {"output.diagnostics", &c.output.diagnostics,
       "Also write non-private diagnostics (realised batch sizes and gradient counts, clip statistics, "
       "train loss): summary.json \"diagnostics\", diag_* CSV columns. No accountant covers them; false "
       "omits them from every output."},
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
      [](auto* p) -> std::string {
        using T = std::decay_t<decltype(*p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return fmt::format("\"{}\"", *p);
        } else if constexpr (std::is_same_v<T, bool>) {
          return *p ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("[{}]", fmt::join(*p, ", "));
        } else {
          return fmt::format("{}", *p);
        }
      },
      field.target);
}

}  // namespace asyncdp::sim
