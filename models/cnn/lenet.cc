#include "models/cnn/lenet.h"

#include "models/cnn/architecture.h"
#include "models/cnn/cnn_model.h"

namespace asyncdp::models {

CnnArchitecture LeNet5Architecture() {
  CnnArchitecture architecture;
  architecture.name = "lenet5";
  architecture.input = {.channels = 1, .height = 28, .width = 28};
  architecture.convs = {{.out_channels = 6, .kernel = 5, .padding = 0},
                        {.out_channels = 16, .kernel = 5, .padding = 0}};
  architecture.hidden = {120, 84};
  architecture.classes = 10;
  architecture.default_chunk_size = 16;
  return architecture;
}

std::unique_ptr<Model> MakeLeNet5(const CnnOptions& options) {
  return std::make_unique<CnnModel>(LeNet5Architecture(), options);
}

}  // namespace asyncdp::models
