// Tests of models/factory.h: every kind builds with the documented shape; bad options and mismatched data
// are ConfigErrors naming the key.
#include "models/factory.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace asyncdp::models {
namespace {

// Runs `make` and returns the ConfigError's key path ("" when nothing was thrown).
template <typename Fn>
std::string ErrorKey(Fn&& make) {
  try {
    make();
  } catch (const ConfigError& e) {
    return e.where();
  }
  return "";
}

ModelOptions Kind(const std::string& kind) {
  ModelOptions o;
  o.kind = kind;
  if (kind == "logistic_l2") o.l2_lambda = 1e-4;
  return o;
}

TEST(MakeModelTest, BuildsEveryLinearKindWithDPlusOneParameters) {
  for (const std::string kind : {"logistic", "logistic_l2", "linear", "svm"}) {
    const auto model = MakeModel(Kind(kind), 123, 2);
    EXPECT_EQ(model->Name(), kind);
    EXPECT_EQ(model->NumParams(), 124) << kind;
  }
}

TEST(MakeModelTest, SoftmaxAndMlpLayerBlocksIncludeBiases) {
  EXPECT_EQ(MakeModel(Kind("softmax"), 784, 10)->NumParams(), 785 * 10);
  ModelOptions mlp = Kind("mlp");
  mlp.hidden = {128, 64};
  const auto model = MakeModel(mlp, 784, 10);
  EXPECT_EQ(model->Name(), "mlp");
  EXPECT_EQ(model->NumParams(), 785 * 128 + 129 * 64 + 65 * 10);
}

TEST(MakeModelTest, BuildsTheCnnsForTheirImageShapes) {
  const auto lenet = MakeModel(Kind("lenet"), 784, 10, data::ImageShape{1, 28, 28});
  EXPECT_EQ(lenet->NumParams(), 44426);
  const auto alexnet = MakeModel(Kind("alexnet"), 3072, 10, data::ImageShape{3, 32, 32});
  EXPECT_EQ(alexnet->NumParams(), 1756426);
}

TEST(MakeModelTest, RejectsUnknownKindsAndMismatchedData) {
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("resnet"), 10, 2); }), "model.kind");
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("logistic"), 784, 10); }), "model.kind");  // binary on 10 classes
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("svm"), 784, 3); }), "model.kind");
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("softmax"), 10, 1); }), "model.kind");
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("lenet"), 123, 2); }), "model.kind");  // not an image
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("lenet"), 3072, 10, data::ImageShape{3, 32, 32}); }), "model.kind");
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("alexnet"), 784, 10, data::ImageShape{1, 28, 28}); }), "model.kind");
  EXPECT_EQ(ErrorKey([] { MakeModel(Kind("logistic"), 0, 2); }), "model.kind");
}

TEST(MakeModelTest, RejectsInvalidOptionsByKey) {
  ModelOptions o = Kind("logistic");
  o.l2_lambda = 0.1;  // the plain objective has no regulariser
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.l2_lambda");
  o = Kind("logistic_l2");
  o.l2_lambda = 0.0;
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.l2_lambda");
  o.l2_lambda = -1.0;
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.l2_lambda");
  o.l2_lambda = 0.1;
  o.regularizer_convention = RegularizerConvention::kLiteral;  // needs N
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.regularizer_num_records");
  o.regularizer_num_records = 100;
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "");
  o = Kind("mlp");
  o.hidden = {};
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.hidden");
  o.hidden = {16, 0};
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.hidden");
  o = Kind("svm");
  o.init_stddev = -0.1;
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 10, 2); }), "model.init_stddev");
  o = Kind("lenet");
  o.l2_lambda = 0.1;
  EXPECT_EQ(ErrorKey([&] { MakeModel(o, 784, 10, data::ImageShape{1, 28, 28}); }), "model.l2_lambda");
}

TEST(ModelKindsTest, ListsTheDocumentedKinds) {
  EXPECT_EQ(ModelKinds(), (std::vector<std::string>{"logistic", "logistic_l2", "linear", "svm", "softmax", "mlp",
                                                    "lenet", "alexnet", "geometric_median"}));
}

}  // namespace
}  // namespace asyncdp::models
