// The fitting helpers of scripts/experiments/convergence.sh that the REPORTs' rate checks rest on, on
// curves with known answers: an exact power law, the step-size slope over a window, floors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

// Runs `FUNCTION ARGS...` after sourcing the helpers; returns its stdout.
std::string Helper(const std::string& call, const TempDir& dir) {
  const std::string exp = SourceDir() + "/scripts/experiments";
  const CliResult r = RunCommand("bash -c " + Quoted("EXP_DIR=" + exp + "; source " + exp + "/common.sh; source " +
                                                    exp + "/plot.sh; source " + exp + "/convergence.sh; " + call),
                                 dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

void WriteCurve(const std::string& path, double scale, double slope, double x_from, double x_to, int points) {
  std::ofstream out(path);
  out << "# x\ty\tdistance\n";
  for (int i = 0; i < points; ++i) {
    const double x = x_from + (x_to - x_from) * i / (points - 1);
    out << x << "\t" << scale * std::pow(x, slope) << "\tNA\n";
  }
}

TEST(ConvergenceScripts, LogLogFitRecoversAPowerLawOverTheLastDecade) {
  TempDir dir;
  const std::string dat = dir.Path("curve.dat");
  WriteCurve(dat, 3.0, -0.5, 100, 50000, 100);
  const std::string fit = Helper("loglog_fit " + Quoted(dat), dir);
  // slope, points, first and last x of the window [5000, 50000].
  EXPECT_THAT(fit, ::testing::StartsWith("-0.500\t")) << fit;
  EXPECT_THAT(fit, ::testing::HasSubstr("\t50000\n")) << fit;
  EXPECT_THAT(Helper("loglog_fit " + Quoted(dat) + " 2 0.01", dir), ::testing::StartsWith("-0.500\t"));
  // A column of NA (no distance recorded) has no fit.
  EXPECT_EQ(Helper("loglog_fit " + Quoted(dat) + " 3", dir), "NA\tNA\tNA\tNA\n");
}

TEST(ConvergenceScripts, ScheduleSlopeIsTheSlopeOfTheStepSizeOverTheWindow) {
  TempDir dir;
  std::ofstream(dir.Path("config.resolved.toml")) << "[schedule]\nstep_rule = 'inverse_linear'\nbeta = 0.001\n";
  // log(η(50000)/η(5000)) / log(10) with η = 1/(1 + 0.001 t): log10(6/51) = -0.929.
  EXPECT_EQ(Helper("schedule_slope " + Quoted(dir.Path("")) + " 5000 50000", dir), "-0.929");
  EXPECT_EQ(Helper("asymptotic_slope " + Quoted(dir.Path("")), dir), "-1\n");
  std::ofstream(dir.Path("config.resolved.toml")) << "[schedule]\nstep_rule = 'inverse_sqrt'\nbeta = 0.01\n";
  // log10((1 + 0.01 sqrt(5000)) / (1 + 0.01 sqrt(50000))) = -0.278; asymptotically -1/2.
  EXPECT_EQ(Helper("schedule_slope " + Quoted(dir.Path("")) + " 5000 50000", dir), "-0.278");
  EXPECT_EQ(Helper("asymptotic_slope " + Quoted(dir.Path("")), dir), "-0.5\n");
  EXPECT_EQ(Helper("rate_verdict -0.95 -0.93", dir), "**holds**\n");
  EXPECT_EQ(Helper("rate_verdict 0.01 -0.28", dir), "**does not hold**\n");
}

TEST(ConvergenceScripts, FloorIsTheMedianOfTheLastQuarter) {
  TempDir dir;
  std::ofstream(dir.Path("flat.dat")) << "# x\ty\n10\t9\n20\t8\n80\t0.5\n90\t0.25\n100\t0.75\n";
  EXPECT_EQ(Helper("curve_floor " + Quoted(dir.Path("flat.dat")), dir), "5.000e-01");
  EXPECT_EQ(Helper("curve_last " + Quoted(dir.Path("flat.dat")), dir), "7.500e-01");
}

}  // namespace
}  // namespace asyncdp::testing
