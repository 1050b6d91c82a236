// CnnModel: the Model contract (models/model.h) for any CnnArchitecture, on the float CnnNetwork.
//
// A batch is cut into chunks of CnnOptions::chunk_size examples (in batch order). With threads > 1 the
// chunks run on a oneTBB arena, each into its own partial sum, and the partial sums are added to grad_sum
// in chunk order (a pipeline: one in-order commit stage overlapping the other chunks' work). The sequence
// of float additions is therefore the same for every thread count: 1 and N threads give bit-identical
// results (conventions.md §2).
//
// Thread safety: immutable after construction; concurrent calls need distinct Workspaces.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "models/cnn/architecture.h"
#include "models/cnn/cnn_options.h"
#include "models/cnn/network.h"
#include "models/model.h"

namespace asyncdp::models {

class CnnModel final : public Model {
 public:
  // Throws ConfigError for invalid options or an inconsistent architecture.
  CnnModel(const CnnArchitecture& architecture, const CnnOptions& options);

  std::string Name() const override { return name_; }
  int64_t NumParams() const override { return network_.geometry().num_params; }
  Eigen::VectorXf InitialParams(uint64_t seed) const override;
  std::unique_ptr<Workspace> NewWorkspace(int64_t max_batch) const override;
  // Throws ConfigError when `data` is not dense image data of the architecture's input shape or has a
  // label outside 0..classes−1.
  ClipStats ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                               std::span<const int64_t> batch, double clip, std::span<float> grad_sum,
                               Workspace& workspace, std::span<float> norms = {}) const override;
  Evaluation Evaluate(std::span<const float> params, const data::Dataset& data) const override;

  const CnnGeometry& geometry() const { return network_.geometry(); }
  const CnnOptions& options() const { return options_; }
  int64_t chunk_size() const { return chunk_size_; }

 private:
  void CheckData(const data::Dataset& data) const;

  std::string name_;
  CnnOptions options_;
  int64_t chunk_size_;
  cnn::CnnNetwork<float> network_;
};

}  // namespace asyncdp::models
