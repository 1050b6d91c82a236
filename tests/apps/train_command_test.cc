// End-to-end: `asyncdp train` from a TOML file with --set overrides, its output files, and its errors.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/apps/cli_runner.h"
#include "tests/apps/small_table3.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;


TEST(TrainCommand, WritesResolvedConfigMetricsClientsAndSummary) {
  TempDir dir;
  const std::string out = dir.Path("run");
  // The non-private diagnostics are opt-in (output.diagnostics, off by default): this run asks for them.
  const CliResult r = RunAsyncdp(SmallTable3Args(out) + " --set output.diagnostics=true", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"config.resolved.toml", "metrics.csv", "clients.csv", "summary.json"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  for (const char* key : {"test_accuracy", "test_loss", "epsilon", "delta", "sigma", "sample_size",
                          "rounds_per_client", "planned_grads_per_client", "max_staleness", "wall_seconds",
                          "grads_per_second", "runtime", "seed", "privacy", "diagnostics"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  for (const char* key : {"proactive", "rdp", "pld", "pld_lower", "gdp"}) {
    EXPECT_TRUE(summary["epsilon"].contains(key)) << key;
    EXPECT_TRUE(summary["privacy"]["worst_client"].contains(key)) << key;
  }
  EXPECT_EQ(summary["privacy"]["accountant"], "pld");  // the default calibrating / halting accountant
  EXPECT_THAT(summary["privacy"]["public"].get<std::string>(), HasSubstr("N_c"));
  EXPECT_THAT(summary["privacy"]["assumptions"]["public"].get<std::string>(), HasSubstr("treated as public"));
  EXPECT_THAT(summary["privacy"]["threat_model"].get<std::string>(), HasSubstr("(i, U)"));
  EXPECT_EQ(summary["seed"], 5);
  EXPECT_EQ(summary["noise_generator_version"], 2);  // core/noise.h: old results stay explainable
  EXPECT_DOUBLE_EQ(summary["sigma"].get<double>(), 19.29962);
  EXPECT_DOUBLE_EQ(summary["delta"].get<double>(), 1.0 / 500);
  EXPECT_THAT(summary["privacy"]["assumptions"]["rdp"].get<std::string>(), HasSubstr("poisson"));
  EXPECT_THAT(ReadFile(out + "/config.resolved.toml"), HasSubstr("seed = 5"));
  EXPECT_THAT(ReadFile(out + "/config.resolved.toml"), HasSubstr("rows_per_client = 500"));
  EXPECT_THAT(ReadFile(out + "/metrics.csv"),
              HasSubstr("global_round,virtual_seconds,gradients,epsilon,test_loss,test_accuracy,diag_train_loss"));
  EXPECT_THAT(ReadFile(out + "/clients.csv"), HasSubstr(",diag_gradients,diag_clipped_fraction,diag_mean_grad_norm"));
  // stdout is the same summary.
  EXPECT_EQ(nlohmann::json::parse(r.out)["test_accuracy"], summary["test_accuracy"]);
}

// The closing "done:" line states what summary.json says: the accuracy and every upper bound of the
// headline epsilon (issue 30: the line is written from the typed summary, not by reading the JSON back by
// key).
std::string Rounded(const nlohmann::json& epsilon) {
  if (epsilon.is_null()) return "none";
  std::ostringstream text;
  text << std::setprecision(4) << epsilon.get<double>();
  return text.str();
}

TEST(TrainCommand, TheDoneLineStatesTheSummarysAccuracyAndEpsilon) {
  TempDir dir;
  std::string args = SmallTable3Args(dir.Path("run"));
  args.replace(args.find("--quiet"), 7, "");  // the done line is an info line
  const CliResult r = RunAsyncdp(args, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(dir.Path("run") + "/summary.json"));
  const nlohmann::json& e = summary["epsilon"];
  const std::string expected =
      fmt::format("done: test accuracy {:.4f}, epsilon rdp {} / pld {} / gdp {} / proactive {} (delta 0.002)",
                  summary["test_accuracy"].get<double>(), Rounded(e["rdp"]), Rounded(e["pld"]),
                  Rounded(e["gdp"]), Rounded(e["proactive"]));
  EXPECT_THAT(r.err, HasSubstr(expected));

  // A check-in run reports its one bound in the same shape, keyed by its accountant.
  const std::string checkins = "train --config " + Quoted(SourceDir() + "/experiments/checkins_a9a.toml") +
                               " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
                               " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
                               " --set clients.count=500 --set checkin.steps=500 --set eval.points=1 --out " +
                               Quoted(dir.Path("checkins"));
  const CliResult c = RunAsyncdp(checkins, dir);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto checkin_summary = nlohmann::json::parse(ReadFile(dir.Path("checkins") + "/summary.json"));
  ASSERT_EQ(checkin_summary["epsilon"].size(), 1u);
  ASSERT_TRUE(checkin_summary["epsilon"]["random_allocation"].is_number());
  EXPECT_THAT(c.err, HasSubstr(fmt::format("done: test accuracy {:.4f}, epsilon random_allocation {} (delta",
                                           checkin_summary["test_accuracy"].get<double>(),
                                           Rounded(checkin_summary["epsilon"]["random_allocation"]))));
}

// Every name in a JSON document (object keys, recursively) and in the header line of a CSV file.
void CollectKeys(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      out.push_back(prefix + key);
      CollectKeys(value, prefix + key + ".", out);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) CollectKeys(value, prefix, out);
  }
}

std::vector<std::string> CsvHeader(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::string line, field;
  std::getline(in, line);
  std::vector<std::string> fields;
  std::istringstream fields_in(line);
  while (std::getline(fields_in, field, ',')) fields.push_back(field);
  return fields;
}

// Issue 10: with output.diagnostics = false no output holds a batch size, a realised gradient count, a clip
// statistic or a loss on training rows. Every output field is listed and checked against those names.
// --print-config prints what the run's config.resolved.toml records — the data-derived defaults (lambda
// = 1/N, delta) and sigma calibrated to dp.epsilon — without training or writing anything.
TEST(TrainCommand, PrintConfigIsTheRunsResolvedConfiguration) {
  TempDir dir;
  const std::string calibrate = " --set dp.sigma=0 --set dp.epsilon=2";
  const std::string out = dir.Path("run");
  const std::string run_args = SmallTable3Args(dir.Path("never"));
  const std::string no_out = run_args.substr(0, run_args.rfind(" --out "));
  const CliResult printed = RunAsyncdp(no_out + calibrate + " --print-config", dir);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  // It writes nothing, so an output directory is refused rather than ignored.
  const CliResult with_out = RunAsyncdp(run_args + calibrate + " --print-config", dir);
  EXPECT_EQ(with_out.exit_code, 2);
  EXPECT_THAT(with_out.err, HasSubstr("--out excludes --print-config"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("never")));
  EXPECT_THAT(printed.out, ::testing::Not(HasSubstr("\nsigma = 0\n")));  // calibrated, not the input's 0
  const CliResult ran = RunAsyncdp(SmallTable3Args(out) + calibrate, dir);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(printed.out, ReadFile(out + "/config.resolved.toml"));

  // Random check-ins resolve their own defaults (logistic_l2's lambda = 1 / records used) and calibrate their
  // sigma; the keys they do not read are comments, so the printed text re-runs.
  const std::string checkins =
      "train --quiet --config " + Quoted(SourceDir() + "/experiments/checkins_a9a.toml") +
      " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
      " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
      " --set clients.count=500 --set checkin.steps=500 --set eval.points=1 --set model.kind=logistic_l2" +
      calibrate;
  const CliResult printed_checkins = RunAsyncdp(checkins + " --print-config", dir);
  ASSERT_EQ(printed_checkins.exit_code, 0) << printed_checkins.err;
  const CliResult ran_checkins = RunAsyncdp(checkins + " --out " + Quoted(dir.Path("checkins")), dir);
  ASSERT_EQ(ran_checkins.exit_code, 0) << ran_checkins.err;
  EXPECT_EQ(printed_checkins.out, ReadFile(dir.Path("checkins") + "/config.resolved.toml"));
  EXPECT_THAT(printed_checkins.out, HasSubstr("\nl2_lambda = 0.002\n"));
  EXPECT_THAT(printed_checkins.out, ::testing::Not(HasSubstr("\nsigma = 0\n")));
  EXPECT_THAT(printed_checkins.out, HasSubstr("\n# sampling = 'poisson'  # not read: "));
}

TEST(TrainCommand, WithoutDiagnosticsNoOutputHoldsANonPrivateValue) {
  TempDir dir;
  const std::string out = dir.Path("run");
  const CliResult r = RunAsyncdp(SmallTable3Args(out) + " --set output.diagnostics=false", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> fields;
  CollectKeys(nlohmann::json::parse(ReadFile(out + "/summary.json")), "summary.", fields);
  for (const char* csv : {"metrics.csv", "clients.csv"}) {
    for (const std::string& column : CsvHeader(out + "/" + csv)) fields.push_back(std::string(csv) + ":" + column);
  }
  ASSERT_GT(fields.size(), 40u);
  // Public or accounted names that contain a watched word on purpose.
  const std::vector<std::string> allowed = {"summary.planned_grads_per_client", "clients.csv:planned_gradients",
                                            "metrics.csv:gradients", "summary.grads_per_second"};
  const std::vector<std::string> forbidden = {"diag", "train_loss", "clip_stat", "clipped", "grad_norm",
                                              "realised", "batch", "gradients", "grads"};
  for (const std::string& field : fields) {
    if (std::find(allowed.begin(), allowed.end(), field) != allowed.end()) continue;
    if (field.rfind("summary.config", 0) == 0) continue;  // the configuration text, not a value of the run
    for (const std::string& word : forbidden) {
      EXPECT_EQ(field.find(word), std::string::npos) << field << " looks like a non-private value";
    }
  }
  // The resolved configuration records the choice.
  EXPECT_THAT(ReadFile(out + "/config.resolved.toml"), HasSubstr("diagnostics = false"));
}

TEST(TrainCommand, UnknownKeyIsExitTwoWithTheKeyPath) {
  TempDir dir;
  const std::string config = dir.Write("bad.toml", "[dp]\nsigma = 1\nsigmma = 2\n");
  const CliResult r = RunAsyncdp("train --config " + Quoted(config) + " --out " + Quoted(dir.Path("o")), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.toml:3:1"));
  EXPECT_THAT(r.err, HasSubstr("dp.sigmma"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("o")));
}

TEST(TrainCommand, BadOverrideAndBadDataAreExitTwoAndLeaveNoResult) {
  TempDir dir;
  const std::string out = dir.Path("o");
  CliResult r = RunAsyncdp(SmallTable3Args(out) + " --set dp.clip=-1", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("dp.clip"));
  const std::string bad_data = dir.Write("bad.libsvm", "+1 1:1 3:1\n-1 2:1 2:1\n");
  r = RunAsyncdp(SmallTable3Args(out) + " --set data.train=" + Quoted(bad_data), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.libsvm:2:"));
  EXPECT_FALSE(std::filesystem::exists(out));
  // No staging directory is left behind either.
  for (const auto& entry : std::filesystem::directory_iterator(dir.Path(""))) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr("partial")));
  }
}

TEST(TrainCommand, ALaterSetOfTheSameKeyWinsWithAWarning) {
  TempDir dir;
  // SmallTable3Args sets eval.points=3; a wrapper's arguments plus one more --set vary one key.
  std::string args = SmallTable3Args(dir.Path("o"));
  args = args.substr(0, args.find(" --out "));  // --print-config instead
  CliResult r = RunAsyncdp(args + " --set eval.points=4 --print-config", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\npoints = 4\n"));
  EXPECT_THAT(r.err, HasSubstr("eval.points: given twice (eval.points=3, then eval.points=4); the later value is "
                               "used"));
  r = RunAsyncdp(args + " --set eval.points=3 --print-config", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("given twice")));  // the same value again drops nothing
}

// A data file that cannot be opened is named by its key; a relative path that does not exist says it was
// looked for from the working directory (the README's configurations name datasets/... from the clone's root,
// so one run from elsewhere missed it with only the path in the message).
TEST(TrainCommand, AMissingDataFileIsNamedByItsKeyAndARelativeOneSaysWhereItWasLookedFor) {
  TempDir dir;
  const std::string config = Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml");
  const std::string cd = "cd " + Quoted(dir.Path("")) + " && " + Quoted(AsyncdpBinary()) + " train --quiet ";
  CliResult r = RunCommand(cd + "--config " + config + " --set data.train=nowhere/a9a.gz --print-config", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: data.train: nowhere/a9a.gz: cannot open: No such file or directory (a "
                               "relative path is taken from the working directory, "));
  EXPECT_THAT(r.err, HasSubstr(", not from the configuration file's folder)"));
  // An absolute path needs no such note, and the test file is named by its own key.
  const std::string missing = dir.Path("missing.t");
  r = RunCommand(cd + "--config " + config + " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
                     " --set data.test=" + Quoted(missing) + " --print-config",
                 dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: data.test: " + missing + ": cannot open: No such file or directory\n"));
  // An error inside a file keeps its FILE:LINE:COL.
  std::ofstream(dir.Path("bad.svm")) << "1 3:1\nx 2:1\n";
  r = RunCommand(cd + "--config " + config + " --set data.train=bad.svm --set data.test= --print-config", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: bad.svm:2:"));
}

// The README runs the shipped configurations from the clone's root as written
// (`asyncdp train --config experiments/proactive_flow.toml`). Each one's data must be there: the clone's
// datasets/ or a Debian package's absolute path, never a file outside the clone. Two named a9a.gz beside
// the configuration (set only by run_experiments.sh) and three ../shared/..., a folder a user's clone lacks.
TEST(TrainCommand, EveryShippedConfigurationFindsItsDataFromTheClonesRoot) {
  TempDir dir;
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() + "/experiments")) {
    if (entry.path().extension() != ".toml") continue;
    const std::string text = ReadFile(entry.path().string());
    const std::string name = entry.path().filename().string();
    EXPECT_THAT(text, ::testing::Not(HasSubstr("\"../"))) << name << " names a file outside the clone";
    if (text.find("\"/usr/share/") != std::string::npos &&
        !std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
      continue;  // Debian's dataset-fashion-mnist is not installed here (scripts/install-deps.sh installs it)
    }
    // --print-config resolves the data-derived defaults, so it opens the data files.
    const CliResult r = RunCommand("cd " + Quoted(SourceDir()) + " && " + Quoted(AsyncdpBinary()) +
                                       " train --quiet --print-config --config " + Quoted("experiments/" + name),
                                   dir);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    ++checked;
  }
  EXPECT_GE(checked, 12);
}

// An empty path (`--out "$DIR"` with DIR unset) is an error naming the option, in every command: train wrote
// to its default results/<config name> instead, and utility-graph and reference-optimum did their work and
// then stopped on a filesystem error with exit code 1.
TEST(TrainCommand, EveryPathOptionRefusesAnEmptyValue) {
  TempDir dir;
  const std::string t3 = Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --config " + t3 + " --out ''", "--out"},
      {"train --config ''", "--config"},
      {"audit --config " + t3 + " --runs 4 --out ''", "--out"},
      {"reference-optimum --config " + t3 + " --out ''", "--out"},
      {"utility-graph --config " + t3 + " --clips 0.1 --sigmas 0,4 --out ''", "--out"},
      {"utility-graph --config '' --clips 0.1 --sigmas 0,4", "--config"},
      {"data info ''", "path"},
      {"data info " + Quoted(SharedFile("datasets/libsvm/a9a.gz")) + " --labels ''", "--labels"},
      {"calc --N 100 --delta 1e-4 --epsilon 1 --phases ''", "--phases"},
      {"account --schedule '' --delta 1e-5", "--schedule"}};
  for (const auto& [args, option] : cases) {
    const CliResult r = RunAsyncdp(args, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("error: " + option + ": empty value; a path is expected")) << args;
  }
}

// An --out that would be refused is refused before the work, not after it: train ran the whole training,
// utility-graph computed every curve, audit ran every training, and only then said the path was a file.
TEST(TrainCommand, AnOutputThatWouldBeRefusedIsRefusedBeforeTheWork) {
  TempDir dir;
  const std::string file = dir.Write("a_file", "not a directory\n");
  const std::string t3 = Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml");
  const std::string data = " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
                           " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz"));
  for (const std::string& args :
       {"utility-graph --config " + t3 + data + " --clips 0.1 --sigmas 0,4 --out " + Quoted(file),
        "audit --config " + Quoted(SourceDir() + "/experiments/audit_logistic.toml") + data + " --runs 20 --out " +
            Quoted(file),
        "reference-optimum --config " + t3 + data + " --out " + Quoted(file),
        "train --config " + t3 + data + " --set schedule.epochs=1 --out " + Quoted(file)}) {
    const CliResult r = RunAsyncdp(args, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("output path exists and is not a directory")) << args;
    // No progress line: utility-graph logs each curve's F(w*), audit its trainings, reference-optimum its w*,
    // train its run ("train: 5 clients, ...") and its accounting.
    EXPECT_THAT(r.err, ::testing::Not(::testing::AnyOf(HasSubstr("F(w*) ="), HasSubstr("trainings"),
                                                       HasSubstr("train: "), HasSubstr("accounting:"))))
        << args << ": " << r.err;
  }
}

TEST(TrainCommand, ConfigDocListsEveryKey) {
  TempDir dir;
  const CliResult r = RunAsyncdp("train --config-doc", dir);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("`protocol.tau`"));
  EXPECT_THAT(r.out, HasSubstr("`dp.sampling`"));
  // The reference reads no configuration and writes no directory: a flag that would be ignored is refused
  // (`--config-doc --config missing.toml` printed the reference before).
  for (const std::string flag : {"--config missing.toml", "--set seed=3", "--out x", "--print-config"}) {
    const CliResult with = RunAsyncdp("train --config-doc " + flag, dir);
    EXPECT_EQ(with.exit_code, 2) << flag;
    EXPECT_THAT(with.err,
                ::testing::AnyOf(HasSubstr("--config-doc excludes " + flag.substr(0, flag.find(' '))),
                                 HasSubstr(flag.substr(0, flag.find(' ')) + " excludes --config-doc")))
        << flag;
    EXPECT_EQ(with.out, "") << flag;
  }
}

// Issue 14, data loss: --out DIR holding an old result plus the user's own files. asyncdp replaces only
// the files it wrote there and keeps the others; a non-empty directory that holds no asyncdp result is
// refused (exit 2) and left as it was.
TEST(TrainCommand, OutIntoAnOldResultKeepsTheUsersFilesAndRefusesForeignDirectories) {
  TempDir dir;
  const std::string out = dir.Path("run");
  ASSERT_EQ(RunAsyncdp(SmallTable3Args(out), dir).exit_code, 0);
  const std::string notes = out + "/notes.md";
  std::ofstream(notes) << "my analysis";
  std::filesystem::create_directories(out + "/figures");
  std::ofstream(out + "/figures/acc.png") << "png";
  const CliResult again = RunAsyncdp(SmallTable3Args(out), dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(notes), "my analysis");
  EXPECT_EQ(ReadFile(out + "/figures/acc.png"), "png");
  EXPECT_TRUE(std::filesystem::exists(out + "/summary.json"));

  const std::string foreign = dir.Path("thesis");
  std::filesystem::create_directories(foreign);
  std::ofstream(foreign + "/chapter1.tex") << "text";
  const CliResult refused = RunAsyncdp(SmallTable3Args(foreign), dir);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, ::testing::StartsWith("error: " + foreign + ": output directory is not empty"));
  EXPECT_EQ(ReadFile(foreign + "/chapter1.tex"), "text");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(foreign), std::filesystem::directory_iterator()), 1);
}

TEST(TrainCommand, ANonFiniteValueInATomlFileIsRefusedAtItsLineAndColumn) {
  TempDir dir;
  const std::string config = dir.Write("inf.toml", "[dp]\nsigma = 4\nclip = inf\n");
  const CliResult r = RunAsyncdp("train --config " + Quoted(config) + " --out " + Quoted(dir.Path("o")), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + config + ":3:8: dp.clip: the value must be a finite number in (0, 1000000], got inf\n");
  EXPECT_FALSE(std::filesystem::exists(dir.Path("o")));
}

TEST(TrainCommand, SilentlyWrongSchedulesAreRefused) {
  TempDir dir;
  const std::string out = dir.Path("o");
  for (const char* setting : {"schedule.epochs=1e30", "schedule.epochs=inf", "schedule.iterations=1e15",
                              "schedule.sample_size_slope=-1", "dp.epsilon=inf", "schedule.eta0=1e308"}) {
    SCOPED_TRACE(setting);
    const CliResult r = RunAsyncdp(SmallTable3Args(out) + " --set " + setting, dir);
    EXPECT_EQ(r.exit_code, 2);
    const std::string key = std::string(setting).substr(0, std::string(setting).find('='));
    EXPECT_THAT(r.err, ::testing::StartsWith("error: --set: " + key + ": the value must be"));
    EXPECT_LT(r.err.size(), 200u);
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

// s larger than a client's shard used to be clamped silently (and the resolved config kept the old s);
// δ = 1/N_c with one- or two-record clients used to give a void guarantee without a word.
TEST(TrainCommand, ImpossibleSampleSizesAndVoidDeltasAreRefused) {
  TempDir dir;
  const std::string out = dir.Path("o");
  const CliResult big = RunAsyncdp(SmallTable3Args(out) + " --set schedule.sample_size=100000", dir);
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_THAT(big.err, ::testing::StartsWith("error: schedule.sample_size: round 0 asks for s = 100000"));
  const CliResult list = RunAsyncdp(SmallTable3Args(out) + " --set schedule.sample_sizes=list" +
                                        " --set schedule.sample_size_list=[5,50000]",
                                    dir);
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_THAT(list.err, HasSubstr("schedule.sample_size_list: round 1 asks for s = 50000"));
  const CliResult tiny = RunAsyncdp(SmallTable3Args(out) + " --set data.rows_per_client=2 --set schedule.sample_size=1", dir);
  EXPECT_EQ(tiny.exit_code, 2);
  EXPECT_THAT(tiny.err, HasSubstr("error: dp.delta: δ = 0.5"));
  EXPECT_FALSE(std::filesystem::exists(out));
  // An explicit small δ is a meaningful guarantee again; a δ above some client's 1/N_c is warned about.
  const CliResult explicit_delta = RunAsyncdp(SmallTable3Args(out) + " --set data.rows_per_client=2" +
                                                  " --set schedule.sample_size=1 --set dp.delta=1e-5",
                                              dir);
  EXPECT_EQ(explicit_delta.exit_code, 0) << explicit_delta.err;
  const CliResult loose = RunAsyncdp(SmallTable3Args(out) + " --set dp.delta=0.05", dir);
  EXPECT_EQ(loose.exit_code, 0) << loose.err;
  EXPECT_THAT(loose.err, HasSubstr("exceeds 1/N_c"));
  EXPECT_FALSE(nlohmann::json::parse(loose.out)["diverged"].get<bool>());
}

// A model that diverges to non-finite values within valid ranges is reported as diverged: `"diverged":
// true`, no accuracy or loss in summary.json nor an accuracy in metrics.csv, an error line, and exit code 0
// — the run completed and its outputs are written (README). The largest C, σ and η0 put noise of ~10^16 on
// every weight of a two-hidden-layer MLP, whose activations then overflow float (any seed: the noise, not
// the data, drives it).
TEST(TrainCommand, ADivergedModelIsReportedAsDivergedWithoutAccuracy) {
  TempDir dir;
  const std::string out = dir.Path("o");
  const CliResult r = RunAsyncdp(SmallTable3Args(out, 3) +
                                     " --set model.kind=mlp --set model.hidden=[16,16] --set dp.sigma=1e6"
                                     " --set dp.clip=1e6 --set schedule.eta0=1e4 --set schedule.beta=0"
                                     " --set data.rows_per_client=100",
                                 dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_TRUE(summary["diverged"].get<bool>());
  EXPECT_TRUE(summary["test_accuracy"].is_null());
  EXPECT_TRUE(summary["test_loss"].is_null());
  EXPECT_THAT(r.err, HasSubstr("the model diverged"));
  std::ifstream metrics(std::filesystem::path(out) / "metrics.csv");
  std::string header, last, line;
  std::getline(metrics, header);
  while (std::getline(metrics, line)) last = line;
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(header.substr(0, header.find(",diag")), "global_round,virtual_seconds,gradients,epsilon,test_loss,test_accuracy");
  // test_accuracy is the sixth column: "nan", never a number for a non-finite model.
  std::vector<std::string> cells;
  std::stringstream cells_in(last);
  for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
  ASSERT_GE(cells.size(), 6u);
  EXPECT_THAT(cells[5], HasSubstr("nan"));
}

// From 100 clients on, a full-step server warns at start (the updates of n clients add up); per_client does
// not; the weighting belongs to the asynchronous rounds and is refused for random check-ins.
TEST(TrainCommand, ManyClientsAtFullStepWarnAndTheWeightingIsRefusedForCheckIns) {
  TempDir dir;
  const std::string args = SmallTable3Args(dir.Path("o"), 2) + " --set clients.count=100";
  const CliResult full = RunAsyncdp(args, dir);
  EXPECT_EQ(full.exit_code, 0) << full.err;
  EXPECT_THAT(full.err, HasSubstr("100 clients at protocol.server_step = \"full\""));
  const CliResult averaged = RunAsyncdp(args + " --set protocol.server_step=per_client", dir);
  EXPECT_EQ(averaged.exit_code, 0) << averaged.err;
  EXPECT_THAT(averaged.err, ::testing::Not(HasSubstr("protocol.server_step")));
  const CliResult checkin = RunAsyncdp(args + " --set protocol.participation=check_in --set protocol.server_step=per_client", dir);
  EXPECT_EQ(checkin.exit_code, 2);
  EXPECT_THAT(checkin.err, HasSubstr("error: protocol.server_step: applies to async_rounds only"));
}

TEST(TrainCommand, ADirectoryIsNotAConfigFile) {
  TempDir dir;
  const CliResult r = RunAsyncdp("train --config " + Quoted(dir.Path("")) + " --out " + Quoted(dir.Path("o")), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is a directory, expected a TOML configuration file"));
}

// A fresh clone runs the shipped configurations on the repository's own a9a copy (paths relative to the
// repository root), with nothing beside the clone.
TEST(TrainCommand, ShippedConfigurationsFindTheirDataInTheRepository) {
  TempDir dir;
  const CliResult r = RunCommand(
      "cd " + Quoted(SourceDir()) + " && " + Quoted(AsyncdpBinary()) +
          " train --quiet --config experiments/table3_strongly_convex.toml --set data.rows_per_client=200"
          " --set schedule.epochs=0.5 --set eval.points=0 --out " + Quoted(dir.Path("run")),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFile(dir.Path("run") + "/config.resolved.toml"), HasSubstr("train = 'datasets/libsvm/a9a.gz'"));
}

// Another tool's summary.json and metrics.csv in --out (no asyncdp manifest): refused, nothing replaced.
TEST(TrainCommand, RefusesADirectoryHoldingAnotherToolsSummary) {
  TempDir dir;
  const std::string out = dir.Path("other");
  std::filesystem::create_directories(out);
  std::ofstream(out + "/summary.json") << "{\"tool\": \"other\"}";
  std::ofstream(out + "/metrics.csv") << "theirs";
  const CliResult r = RunAsyncdp(SmallTable3Args(out), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds no asyncdp result"));
  EXPECT_EQ(ReadFile(out + "/summary.json"), "{\"tool\": \"other\"}");
  EXPECT_EQ(ReadFile(out + "/metrics.csv"), "theirs");
}

TEST(AuditAndUtilityGraphCommands, RefuseWhatTheyWouldIgnoreOrOverflow) {
  TempDir dir;
  const std::string config = Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml");
  const std::string data = " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
                           " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz"));
  const CliResult audit =
      RunAsyncdp("audit --quiet --config " + config + data + " --set audit.test_noise_scale=0.1 --out " +
                     Quoted(dir.Path("audit")), dir);
  EXPECT_EQ(audit.exit_code, 2);
  EXPECT_THAT(audit.err, HasSubstr("audit.test_noise_scale"));
  EXPECT_THAT(audit.err, HasSubstr("--test-noise-scale"));
  // Written at its default value, too: the command does not read it either way.
  const CliResult at_default = RunAsyncdp(
      "audit --quiet --config " + config + data + " --set audit.client=0 --out " + Quoted(dir.Path("audit0")),
      dir);
  EXPECT_EQ(at_default.exit_code, 2);
  EXPECT_THAT(at_default.err, HasSubstr("audit.client"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("audit0")));
  const CliResult graph = RunAsyncdp("utility-graph --quiet --config " + config + data +
                                         " --clips 0.1 --sigmas 0,1e308 --out " + Quoted(dir.Path("graph")),
                                     dir);
  EXPECT_EQ(graph.exit_code, 2);
  EXPECT_THAT(graph.err, HasSubstr("--sigmas"));
  EXPECT_THAT(graph.err, HasSubstr("overflows"));
}

}  // namespace
}  // namespace asyncdp::testing
