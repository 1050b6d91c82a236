#include "models/cnn/alexnet.h"

#include "models/cnn/architecture.h"
#include "models/cnn/cnn_model.h"

namespace asyncdp::models {

CnnArchitecture AlexNetCifarArchitecture() {
  CnnArchitecture architecture;
  architecture.name = "alexnet_cifar";
  architecture.input = {.channels = 3, .height = 32, .width = 32};
  architecture.convs = {{.out_channels = 64, .kernel = 5, .padding = 2},
                        {.out_channels = 64, .kernel = 5, .padding = 2}};
  architecture.hidden = {384, 192};
  architecture.classes = 10;
  architecture.default_chunk_size = 16;
  return architecture;
}

std::unique_ptr<Model> MakeAlexNetCifar(const CnnOptions& options) {
  return std::make_unique<CnnModel>(AlexNetCifarArchitecture(), options);
}

}  // namespace asyncdp::models
