// End-to-end: run the built `asyncdp account` binary; check its JSON against the reference oracle, the
// key sets, calibration, schedule files and the error path (exit code 2, file:line:col).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"

namespace asyncdp::apps {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::Quoted;
using testing::RunAsyncdp;

std::string Keys(const nlohmann::ordered_json& object) {
  std::string keys;
  for (const auto& [key, value] : object.items()) keys += key + ",";
  return keys;
}

TEST(AccountCommandTest, AllAccountantsForOneReferenceRow) {
  // reference/accountant-reference.csv row q=0.01, sigma=2, steps=100, delta=1e-5.
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("account --q 0.01 --sigma 2 --steps 100 --delta 1e-5", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(Keys(out), "q,sigma,steps,delta,sampling,neighbors,public,rdp,pld,gdp,");
  EXPECT_EQ(out["sampling"], "poisson");
  EXPECT_EQ(out["neighbors"], "add_remove");
  EXPECT_LE(out["rdp"]["epsilon"].get<double>(), 0.2571292377435293 * (1 + 1e-3));
  EXPECT_GT(out["rdp"]["order"].get<double>(), 1.0);
  EXPECT_NEAR(out["pld"]["epsilon"].get<double>(), 0.18979452135971958, 0.01 * 0.18979452135971958);
  EXPECT_LE(out["pld"]["epsilon_lower"].get<double>(), out["pld"]["epsilon"].get<double>());
  EXPECT_GE(out["pld"]["epsilon"].get<double>(), 0.17979897116912116);
  EXPECT_EQ(out["gdp"]["bound"], "approximation");
  EXPECT_EQ(out["rdp"]["bound"], "upper_bound");
  EXPECT_GT(out["gdp"]["mu"].get<double>(), 0.0);
}

TEST(AccountCommandTest, OnlyTheRequestedAccountantAndFixedSizeSampling) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --q 0.02 --sigma 1.5 --steps 500 --delta 1e-6 --accountant rdp --sampling fixed", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(Keys(out), "q,sigma,steps,delta,sampling,neighbors,public,rdp,");
  EXPECT_EQ(out["sampling"], "fixed_size_without_replacement");
  EXPECT_EQ(out["neighbors"], "replace_one");
  EXPECT_THAT(out["rdp"]["method"].get<std::string>(), HasSubstr("Wang-Balle-Kasiviswanathan"));
}

TEST(AccountCommandTest, EpsilonCalibratesSigmaAndRoundTrips) {
  testing::TempDir dir;
  const CliResult r =
      RunAsyncdp("account --q 0.01 --epsilon 2 --steps 1000 --delta 1e-5 --accountant pld", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  const double sigma = out["pld"]["sigma"].get<double>();
  EXPECT_LE(out["pld"]["epsilon"].get<double>(), 2.0);
  // Feeding the calibrated sigma back gives epsilon <= 2; 0.1% less noise exceeds it.
  const auto at = [&](double s) {
    const CliResult back = RunAsyncdp(
        "account --q 0.01 --sigma " + std::to_string(s) + " --steps 1000 --delta 1e-5 --accountant pld", dir);
    EXPECT_EQ(back.exit_code, 0) << back.err;
    return nlohmann::json::parse(back.out)["pld"]["epsilon"].get<double>();
  };
  EXPECT_LE(at(sigma * (1 + 1e-6)), 2.0);
  EXPECT_GT(at(sigma * (1 - 1e-3)), 2.0);
}

TEST(AccountCommandTest, HeterogeneousScheduleFile) {
  testing::TempDir dir;
  const std::string path =
      dir.Write("schedule.csv", "q,sigma,count\n# phase 1\n0.01,1.0,300\n0.02,2.0,100\n");
  const CliResult r =
      RunAsyncdp("account --schedule " + Quoted(path) + " --delta 1e-5 --accountant gdp", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(Keys(out), "schedule,steps,delta,sampling,neighbors,public,gdp,");
  EXPECT_EQ(out["steps"], 400);
  EXPECT_EQ(out["schedule"][1]["count"], 100);
}

TEST(AccountCommandTest, BadInputIsExitCode2WithLocation) {
  testing::TempDir dir;
  const std::string path = dir.Write("bad.csv", "q,sigma,count\n0.01,1.0,10\n0.01,x,10\n");
  CliResult r = RunAsyncdp("account --schedule " + Quoted(path) + " --delta 1e-5", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:3:6: expected a number for sigma"));
  r = RunAsyncdp("account --q 1.5 --sigma 1 --steps 10 --delta 1e-5", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: --q"));
  r = RunAsyncdp("account --q 0.1 --sigma 1 --epsilon 1 --steps 10 --delta 1e-5", dir);
  EXPECT_EQ(r.exit_code, 2);  // --sigma and --epsilon together
  EXPECT_TRUE(r.out.empty());
  // A random-allocation option under another sampler names the option given (it used to say --k for all).
  for (const std::string option : {"--k 3", "--windows 2", "--p0 0.5"}) {
    SCOPED_TRACE(option);
    r = RunAsyncdp("account --q 0.01 --sigma 1 --steps 10 --delta 1e-5 " + option, dir);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("error: " + option.substr(0, option.find(' ')) + ": "));
    EXPECT_THAT(r.err, HasSubstr("apply to sampling random_allocation only"));
  }
}

// Issue 10's counterexample: fixed size, q = 0.01, sigma = 1, one round, delta = 1e-5 needs epsilon ~3.02
// (the old replace-one pair reported 0.209).
TEST(AccountCommandTest, FixedSizeCounterexampleReportsAtLeastThree) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("account --q 0.01 --sigma 1 --steps 1 --delta 1e-5 --sampling fixed", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_GE(out["pld"]["epsilon"].get<double>(), 3.0);
  EXPECT_GE(out["rdp"]["epsilon"].get<double>(), 3.0);
  EXPECT_THAT(out["pld"]["method"].get<std::string>(), HasSubstr("Zhu-Dong-Wang"));
}

// Issue 14: extreme but valid inputs give a bound (null = infinite) or a clear error, never an abort, a
// hang or a saturated number.
TEST(AccountCommandTest, ExtremeInputsGiveABoundOrAClearError) {
  testing::TempDir dir;
  CliResult r = RunAsyncdp("account --q 0.01 --sigma 1e-6 --steps 100 --delta 1e-5", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_TRUE(out["pld"]["epsilon"].is_null());  // epsilon = infinity
  EXPECT_GT(out["rdp"]["epsilon"].get<double>(), 1e6);
  r = RunAsyncdp("account --q 0.01 --sigma 1e300 --steps 100 --delta 1e-5 --accountant pld", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(nlohmann::ordered_json::parse(r.out)["pld"]["epsilon"].get<double>(), 1e-6);
  r = RunAsyncdp("account --q 0.01 --sigma 1 --steps 1000000000000 --delta 1e-5", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = nlohmann::ordered_json::parse(r.out);
  EXPECT_THAT(out["pld"]["unavailable"].get<std::string>(), HasSubstr("2^30"));
  EXPECT_GT(out["rdp"]["epsilon"].get<double>(), 1e3);
  r = RunAsyncdp("account --q 0.01 --sigma 1 --steps 1000000000000 --delta 1e-5 --accountant pld", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("use the rdp accountant"));
  for (const char* steps : {"99999999999999999999", "-3", "2.5", "1e6"}) {
    r = RunAsyncdp(std::string("account --q 0.01 --sigma 1 --delta 1e-5 --steps ") + steps, dir);
    EXPECT_EQ(r.exit_code, 2) << steps;
    EXPECT_THAT(r.err, HasSubstr("error: --steps: expected a whole number")) << steps;
    EXPECT_TRUE(r.out.empty());
  }
  const std::string path = dir.Write("huge.csv", "q,sigma,count\n0.01,1.0,100000000000000\n");
  r = RunAsyncdp("account --schedule " + Quoted(path) + " --delta 1e-5 --accountant rdp", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::ordered_json::parse(r.out)["rdp"]["epsilon"].get<double>(), 1e3);
}

// The exact privacy curve of T full-batch Gaussian releases (q = 1) is that of one Gaussian with
// mu = sqrt(T)/sigma (Balle-Wang 2018, Theorem 8; docs/theory.md, "Gaussian mechanism"): an oracle that
// shares no code with the accountants. delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
double ExactGaussianDelta(double mu, double epsilon) {
  const auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  return phi(-epsilon / mu + mu / 2.0) - std::exp(epsilon) * phi(-epsilon / mu - mu / 2.0);
}

TEST(AccountCommandTest, AtEpsilonGivesTheDeltaCurveAboveTheExactOne) {
  testing::TempDir dir;
  for (const double epsilon : {0.0, 0.5, 2.0, 6.0}) {
    const CliResult r = RunAsyncdp("account --q 1 --sigma 4 --steps 16 --at-epsilon " + std::to_string(epsilon), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto out = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(Keys(out), "q,sigma,steps,at_epsilon,sampling,neighbors,public,rdp,pld,gdp,");
    const double exact = ExactGaussianDelta(1.0, epsilon);  // mu = sqrt(16)/4
    // Upper bounds are at or above the exact curve; the PLD within a few % of it (its discretisation; the
    // relative gap grows as delta shrinks); GDP's CLT mu for q = 1 is sqrt(T(e^(1/sigma^2) - 1)) = 1.016.
    EXPECT_GE(out["rdp"]["delta"].get<double>(), exact * (1 - 1e-9)) << epsilon;
    EXPECT_GE(out["pld"]["delta"].get<double>(), exact * (1 - 1e-9)) << epsilon;
    EXPECT_LE(out["pld"]["delta"].get<double>(), exact * 1.05) << epsilon;
    EXPECT_NEAR(out["gdp"]["delta"].get<double>(), ExactGaussianDelta(std::sqrt(16 * std::expm1(1.0 / 16)), epsilon),
                1e-9 * exact + 1e-15)
        << epsilon;
    EXPECT_EQ(out["pld"]["bound"], "upper_bound");
  }
}

TEST(AccountCommandTest, AtEpsilonInvertsEpsilonAtDelta) {
  testing::TempDir dir;
  const CliResult eps = RunAsyncdp("account --q 0.01 --sigma 1 --steps 1000 --delta 1e-5 --accountant pld", dir);
  ASSERT_EQ(eps.exit_code, 0) << eps.err;
  const double epsilon = nlohmann::ordered_json::parse(eps.out)["pld"]["epsilon"].get<double>();
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", epsilon);
  const CliResult r =
      RunAsyncdp(std::string("account --q 0.01 --sigma 1 --steps 1000 --accountant pld --at-epsilon ") + text, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double delta = nlohmann::ordered_json::parse(r.out)["pld"]["delta"].get<double>();
  EXPECT_LE(delta, 1e-5 * (1 + 1e-6));
  EXPECT_GT(delta, 0.9e-5);
}

TEST(AccountCommandTest, AtEpsilonRefusesWhatItCannotAnswer) {
  testing::TempDir dir;
  const CliResult both = RunAsyncdp("account --q 0.01 --sigma 1 --steps 10 --delta 1e-5 --at-epsilon 1", dir);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("either --delta or --at-epsilon"));
  const CliResult neither = RunAsyncdp("account --q 0.01 --sigma 1 --steps 10", dir);
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_THAT(neither.err, HasSubstr("--delta: required"));
  const CliResult negative = RunAsyncdp("account --q 0.01 --sigma 1 --steps 10 --at-epsilon -1", dir);
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_THAT(negative.err, HasSubstr("--at-epsilon"));
  const CliResult calibrate = RunAsyncdp("account --q 0.01 --epsilon 1 --steps 10 --at-epsilon 1", dir);
  EXPECT_EQ(calibrate.exit_code, 2);
  const CliResult allocation_calibrate =
      RunAsyncdp("account --sampling random_allocation --steps 10 --epsilon 1 --at-epsilon 1", dir);
  EXPECT_EQ(allocation_calibrate.exit_code, 2);
  EXPECT_THAT(allocation_calibrate.err, HasSubstr("--at-epsilon"));
}

TEST(AccountCommandTest, RandomAllocationDeltaAtEpsilonRoundTrips) {
  // delta(epsilon(delta)) = delta within 1e-6 relative, per direction the best bound, the worse direction.
  testing::TempDir dir;
  const std::string window =
      "account --sampling random_allocation --steps 100 --windows 10 --p0 0.5 --sigma 1 ";
  const CliResult at_delta = RunAsyncdp(window + "--delta 1e-6", dir);
  ASSERT_EQ(at_delta.exit_code, 0) << at_delta.err;
  const double epsilon =
      nlohmann::ordered_json::parse(at_delta.out)["random_allocation"]["epsilon"].get<double>();
  const CliResult at_epsilon = RunAsyncdp(window + "--at-epsilon " + fmt::format("{:.17g}", epsilon), dir);
  ASSERT_EQ(at_epsilon.exit_code, 0) << at_epsilon.err;
  const auto out = nlohmann::ordered_json::parse(at_epsilon.out);
  EXPECT_DOUBLE_EQ(out["at_epsilon"].get<double>(), epsilon);
  const auto& ra = out["random_allocation"];
  EXPECT_NEAR(ra["delta"].get<double>(), 1e-6, 1e-12);
  EXPECT_EQ(ra["bound"], "upper_bound");
  EXPECT_EQ(ra["binding_bound"], "pld");
  double best_remove = 1.0, best_add = 1.0;
  for (const auto& b : ra["bounds"]) {
    ASSERT_TRUE(b.contains("delta"));
    if (!b["applicable"].get<bool>() || b["delta"].is_null()) continue;
    double& best = b["direction"] == "remove" ? best_remove : best_add;
    best = std::min(best, b["delta"].get<double>());
  }
  EXPECT_DOUBLE_EQ(ra["delta"].get<double>(), std::max(best_remove, best_add));
}

TEST(AccountCommandTest, RandomAllocationCurveIsItsReportedBound) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --sampling random_allocation --steps 100 --windows 10 --sigma 1 --delta 1e-6 --curve "
      "--curve-deltas 1e-5 --curve-deltas 1e-6 --curve-epsilons 1 --curve-epsilons 2 --curve-alphas 0 "
      "--curve-alphas 0.01",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  const auto& curve = out["curve"]["random_allocation"];
  EXPECT_EQ(curve["bound"], "upper_bound");
  ASSERT_EQ(curve["epsilon_of_delta"].size(), 2u);
  EXPECT_NEAR(curve["epsilon_of_delta"][1]["epsilon"].get<double>(),
              out["random_allocation"]["epsilon"].get<double>(), 1e-9);
  ASSERT_EQ(curve["delta_of_epsilon"].size(), 2u);
  EXPECT_GT(curve["delta_of_epsilon"][0]["delta"].get<double>(),
            curve["delta_of_epsilon"][1]["delta"].get<double>());
  ASSERT_EQ(curve["tradeoff"].size(), 2u);
  EXPECT_GT(curve["tradeoff"][1]["beta"].get<double>(), 0.0);
  EXPECT_LT(curve["tradeoff"][1]["beta"].get<double>(), 0.99);
}

TEST(AccountCommandTest, HelpDocumentsEveryOutputField) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("account --help", dir);
  EXPECT_EQ(r.exit_code, 0);
  for (const char* field :
       {"neighbors", "rdp.order", "pld.epsilon_lower", "gdp.mu", "approximation", "--schedule"}) {
    EXPECT_THAT(r.out, HasSubstr(field));
  }
}

}  // namespace
}  // namespace asyncdp::apps

namespace asyncdp::apps {
namespace {

TEST(AccountCommandTest, RandomAllocationPrintsEveryBoundBesidePoisson) {
  // Spec R.6.3: sigma = 1, m = 1000, delta = 1e-6, one window: Renyi remove 0.8694 at order 13 (orders up
  // to 40; the default range reaches further), AM-GM add 0.6154.
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --sampling random_allocation --steps 1000 --k 1 --windows 1 --sigma 1 --delta 1e-6", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(Keys(out), "sampling,steps,k,windows,p0,sigma,delta,neighbors,public,random_allocation,poisson,shuffle,");
  EXPECT_EQ(out["neighbors"], "add_remove");
  const auto& ra = out["random_allocation"];
  EXPECT_EQ(ra["bound"], "upper_bound");
  EXPECT_THAT(ra["assumptions"].get<std::string>(), HasSubstr("add/remove"));
  std::string names;
  double best_remove = 1e9, best_add = 1e9;
  for (const auto& b : ra["bounds"]) {
    names += b["bound"].get<std::string>() + "/" + b["direction"].get<std::string>() + ",";
    EXPECT_FALSE(b["theorem"].get<std::string>().empty());
    if (!b["applicable"].get<bool>() || b["epsilon"].is_null()) continue;
    double& best = b["direction"] == "remove" ? best_remove : best_add;
    best = std::min(best, b["epsilon"].get<double>());
    if (b["bound"] == "renyi_remove") {
      EXPECT_LE(b["epsilon"].get<double>(), 0.8694 + 1e-4);
    }
    if (b["bound"] == "amgm_add") {
      EXPECT_NEAR(b["epsilon"].get<double>(), 0.6154, 1e-4);
    }
  }
  EXPECT_EQ(names,
            "renyi_remove/remove,amgm_add/add,decomposition/remove,decomposition/add,recursive/remove,"
            "recursive/add,pld/remove,pld/add,");
  EXPECT_DOUBLE_EQ(ra["epsilon"].get<double>(), std::max(best_remove, best_add));
  // The random-allocation PLD binds, below Poisson subsampling at the same rate (Feldman & Shenfeld 2026).
  EXPECT_EQ(ra["binding_bound"], "pld");
  EXPECT_LE(ra["epsilon"].get<double>(), out["poisson"]["pld"]["epsilon"].get<double>());
  // k = 1: the certified lower bound on the true epsilon sits just below the guarantee.
  const auto& lower = ra["lower_bound"];
  EXPECT_EQ(lower["bound"], "lower_bound");
  EXPECT_LE(lower["epsilon"].get<double>(), ra["epsilon"].get<double>());
  EXPECT_GE(lower["epsilon"].get<double>(), 0.99 * ra["epsilon"].get<double>());
  EXPECT_DOUBLE_EQ(lower["epsilon"].get<double>(),
                   std::max(lower["remove_epsilon"].get<double>(), lower["add_epsilon"].get<double>()));
  // Poisson at rate 1/m over m rounds, and the shuffled pass of m records.
  EXPECT_DOUBLE_EQ(out["poisson"]["q"].get<double>(), 0.001);
  EXPECT_EQ(out["poisson"]["steps"].get<int64_t>(), 1000);
  EXPECT_GT(out["poisson"]["pld"]["epsilon"].get<double>(), 0.0);
  EXPECT_EQ(out["shuffle"]["neighbors"], "replace_one");
  EXPECT_GT(out["shuffle"]["epsilon"].get<double>(), 0.0);
}

TEST(AccountCommandTest, RandomAllocationWithAbstentionAndSeveralWindows) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --sampling random_allocation --steps 100 --windows 10 --p0 0.5 --sigma 2 --delta 1e-6", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  EXPECT_DOUBLE_EQ(out["poisson"]["q"].get<double>(), 0.005);
  EXPECT_EQ(out["poisson"]["steps"].get<int64_t>(), 1000);
  EXPECT_TRUE(out["shuffle"]["epsilon"].is_null());
  EXPECT_GT(out["random_allocation"]["epsilon"].get<double>(), 0.0);
  EXPECT_LE(out["random_allocation"]["lower_bound"]["epsilon"].get<double>(),
            out["random_allocation"]["epsilon"].get<double>());
}

TEST(AccountCommandTest, RandomAllocationWithoutALowerBoundStillReports) {
  // sigma = 0.3: one window's law is too heavy-tailed for the lower bound's grid; the upper bound stands
  // (another bound binds) and the lower bound says why it is missing (it aborted the command before).
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --sampling random_allocation --steps 100 --windows 10 --sigma 0.3 --delta 1e-6", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ra = nlohmann::ordered_json::parse(r.out)["random_allocation"];
  EXPECT_GT(ra["epsilon"].get<double>(), 10.0);
  EXPECT_TRUE(ra["lower_bound"]["epsilon"].is_null());
  EXPECT_THAT(ra["lower_bound"]["unavailable"].get<std::string>(), HasSubstr("sigma = 0.3"));
  // sigma = 0.05: the window's PLD itself overflows its grids (this aborted the command, and any calibration
  // whose search passed there): the pld bound is not applicable, with the reason, and the others decide.
  const CliResult tiny =
      RunAsyncdp("account --sampling random_allocation --steps 3 --sigma 0.05 --delta 1e-5", dir);
  ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
  const auto tiny_ra = nlohmann::ordered_json::parse(tiny.out)["random_allocation"];
  EXPECT_GT(tiny_ra["epsilon"].get<double>(), 100.0);
  for (const auto& b : tiny_ra["bounds"]) {
    if (b["bound"] != "pld") continue;
    EXPECT_FALSE(b["applicable"].get<bool>());
    EXPECT_THAT(b["note"].get<std::string>(), HasSubstr("cannot be computed"));
  }
}

TEST(AccountCommandTest, RandomAllocationHasNoLowerBoundForSeveralAllocations) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --sampling random_allocation --steps 100 --k 2 --windows 2 --sigma 1 --delta 1e-6", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lower = nlohmann::ordered_json::parse(r.out)["random_allocation"]["lower_bound"];
  EXPECT_TRUE(lower["epsilon"].is_null());
  EXPECT_THAT(lower["unavailable"].get<std::string>(), HasSubstr("Lemma 3.2"));
}

TEST(AccountCommandTest, RandomAllocationRejectsBadInput) {
  testing::TempDir dir;
  for (const char* args : {"--steps 100 --sigma 1 --delta 1e-6 --p0 1.5", "--steps 100 --sigma 1 --delta 1e-6 --k 101",
                           "--steps 100 --sigma 1 --delta 1e-6 --windows 0", "--steps 0 --sigma 1 --delta 1e-6",
                           "--steps 100 --delta 1e-6", "--steps 100 --sigma 1 --delta 1e-6 --q 0.1"}) {
    const CliResult r = RunAsyncdp(std::string("account --sampling random_allocation ") + args, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("error")) << args;
  }
  const CliResult r = RunAsyncdp("account --q 0.1 --sigma 1 --steps 10 --delta 1e-6 --windows 3", dir);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(AccountCommandTest, RandomAllocationCalibratesSigma) {
  // Expectation: --epsilon in place of --sigma returns the smallest sigma (1e-4 relative) whose reported
  // epsilon is <= 1; accounting that sigma gives the same epsilon, 0.1% less noise exceeds the target.
  testing::TempDir dir;
  const std::string window = "account --sampling random_allocation --steps 100 --k 2 --windows 2 --delta 1e-6 ";
  const CliResult r = RunAsyncdp(window + "--epsilon 1", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  const double sigma = out["random_allocation"]["sigma"].get<double>();
  const double epsilon = out["random_allocation"]["epsilon"].get<double>();
  EXPECT_LE(epsilon, 1.0);
  const auto account = [&](double s) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", s);
    const CliResult back = RunAsyncdp(window + "--sigma " + text, dir);
    EXPECT_EQ(back.exit_code, 0) << back.err;
    return nlohmann::ordered_json::parse(back.out)["random_allocation"]["epsilon"].get<double>();
  };
  EXPECT_EQ(account(sigma), epsilon);
  EXPECT_GT(account(sigma * 0.999), 1.0);
  const CliResult both = RunAsyncdp(window + "--epsilon 1 --sigma 2", dir);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("exactly one of --sigma / --epsilon"));
}

// --curve: ε(δ), δ(ε) and the trade-off β(α) per accountant; its ε at the headline δ is the headline's.
TEST(AccountCommandTest, CurvePrintsEveryAccountantsWholeCurve) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp(
      "account --q 0.01 --sigma 1 --steps 1000 --delta 1e-5 --accountant pld --curve --curve-deltas 1e-3,1e-5 "
      "--curve-epsilons 0,1,2 --curve-alphas 0,0.05,0.5,1",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  const auto& curve = out["curve"]["pld"];
  EXPECT_EQ(curve["bound"], "upper_bound");
  ASSERT_EQ(curve["epsilon_of_delta"].size(), 2u);
  EXPECT_EQ(curve["epsilon_of_delta"][1]["delta"].get<double>(), 1e-5);
  EXPECT_NEAR(curve["epsilon_of_delta"][1]["epsilon"].get<double>(), out["pld"]["epsilon"].get<double>(),
              1e-9 * out["pld"]["epsilon"].get<double>());
  ASSERT_EQ(curve["delta_of_epsilon"].size(), 3u);
  EXPECT_GT(curve["delta_of_epsilon"][0]["delta"].get<double>(), curve["delta_of_epsilon"][2]["delta"].get<double>());
  ASSERT_EQ(curve["tradeoff"].size(), 4u);
  EXPECT_NEAR(curve["tradeoff"][0]["beta"].get<double>(), 1.0, 1e-9);  // α = 0: β = 1 − δ(ε_max) ≈ 1
  EXPECT_EQ(curve["tradeoff"][3]["beta"].get<double>(), 0.0);
  EXPECT_GT(curve["tradeoff_profile_points"].get<int>(), 100);
}

TEST(AccountCommandTest, CurveRefusesWhatItCannotDraw) {
  testing::TempDir dir;
  const CliResult alloc =
      RunAsyncdp("account --sampling random_allocation --steps 100 --epsilon 1 --delta 1e-5 --curve", dir);
  EXPECT_EQ(alloc.exit_code, 2);
  EXPECT_THAT(alloc.err, HasSubstr("--curve"));
  const CliResult lists = RunAsyncdp("account --q 0.01 --sigma 1 --steps 10 --delta 1e-5 --curve-deltas 1e-5", dir);
  EXPECT_EQ(lists.exit_code, 2);
  EXPECT_THAT(lists.err, HasSubstr("need --curve"));
  const CliResult bad = RunAsyncdp("account --q 0.01 --sigma 1 --steps 10 --delta 1e-5 --curve --curve-deltas 2", dir);
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace asyncdp::apps
