// Data-layer throughput: LIBSVM parsing from memory (the parser alone) and from a .gz file (read + gunzip
// + parse), IDX loading, and partitioning. bytes_per_second is always decompressed text/bytes, so the
// in-memory and end-to-end numbers are comparable. Target: BM_LibsvmParse >= 100 MB/s on one core.
#include <benchmark/benchmark.h>

#include <string>

#include "data/file_contents.h"
#include "data/idx.h"
#include "data/libsvm.h"
#include "data/partition.h"

namespace {

std::string SharedPath(const std::string& relative) {
  return std::string(ASYNCDP_SHARED_DIR) + "/" + relative;
}

constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist/";

// The decompressed text of a shared LIBSVM file, read once per process.
const std::string& LibsvmText(const std::string& relative) {
  static std::string a9a = asyncdp::data::ReadFileContents(SharedPath("datasets/libsvm/a9a.gz"));
  static std::string ijcnn1 = asyncdp::data::ReadFileContents(SharedPath("datasets/libsvm/ijcnn1.gz"));
  return relative == "a9a" ? a9a : ijcnn1;
}

// Parser alone over text in memory. a9a: binary features ("12:1"); ijcnn1: real values ("13:-0.930435").
void BM_LibsvmParse(benchmark::State& state, const std::string& name) {
  const std::string& text = LibsvmText(name);
  for (auto _ : state) {
    asyncdp::data::Dataset d = asyncdp::data::ParseLibsvm(text, name);
    benchmark::DoNotOptimize(d.sparse.valuePtr());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK_CAPTURE(BM_LibsvmParse, a9a, std::string("a9a"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LibsvmParse, ijcnn1, std::string("ijcnn1"))->Unit(benchmark::kMillisecond);

// What an MPI rank does to read only its clients' rows (sim/train_data.cc): a labels-only parse, then a
// parse keeping the features of 1/W of the rows (W = range(0) worker ranks, a block of rows each). Against
// BM_LibsvmParse/ijcnn1 this is the price of skipping rows instead of one rank parsing and scattering them.
void BM_LibsvmParseHostedRows(benchmark::State& state) {
  const std::string& text = LibsvmText("ijcnn1");
  const int64_t workers = state.range(0);
  asyncdp::data::LibsvmOptions labels_only;
  labels_only.labels_only = true;
  for (auto _ : state) {
    const asyncdp::data::Dataset labels = asyncdp::data::ParseLibsvm(text, "ijcnn1", labels_only);
    asyncdp::data::LibsvmOptions hosted;
    hosted.rows_held.assign(static_cast<size_t>(labels.rows()), false);
    for (int64_t r = 0; r < labels.rows() / workers; ++r) hosted.rows_held[static_cast<size_t>(r)] = true;
    asyncdp::data::Dataset d = asyncdp::data::ParseLibsvm(text, "ijcnn1", hosted);
    benchmark::DoNotOptimize(d.sparse.valuePtr());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_LibsvmParseHostedRows)->Arg(1)->Arg(4)->Arg(64)->Unit(benchmark::kMillisecond);

// End to end from the compressed file: read, gunzip (zlib), parse. Bytes = decompressed text.
void BM_LibsvmReadGzFile(benchmark::State& state) {
  const std::string path = SharedPath("datasets/libsvm/a9a.gz");
  const int64_t text_bytes = static_cast<int64_t>(LibsvmText("a9a").size());
  for (auto _ : state) {
    asyncdp::data::Dataset d = asyncdp::data::ReadLibsvm(path);
    benchmark::DoNotOptimize(d.sparse.valuePtr());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * text_bytes);
}
BENCHMARK(BM_LibsvmReadGzFile)->Unit(benchmark::kMillisecond);

// Gunzip alone (the share of BM_LibsvmReadGzFile spent in zlib).
void BM_GunzipFile(benchmark::State& state) {
  const std::string path = SharedPath("datasets/libsvm/a9a.gz");
  int64_t bytes = 0;
  for (auto _ : state) {
    const std::string text = asyncdp::data::ReadFileContents(path);
    bytes = static_cast<int64_t>(text.size());
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}
BENCHMARK(BM_GunzipFile)->Unit(benchmark::kMillisecond);

// Fashion-MNIST test set (10000 × 784) from .gz: gunzip + header checks + byte→float scaling.
void BM_IdxLoadFashionTest(benchmark::State& state) {
  const std::string images = std::string(kFashionDir) + "t10k-images-idx3-ubyte.gz";
  const std::string labels = std::string(kFashionDir) + "t10k-labels-idx1-ubyte.gz";
  for (auto _ : state) {
    asyncdp::data::Dataset d = asyncdp::data::LoadIdxPair(images, labels);
    benchmark::DoNotOptimize(d.dense.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * (16 + 10000 * 784 + 8 + 10000));
}
BENCHMARK(BM_IdxLoadFashionTest)->Unit(benchmark::kMillisecond);

// Partitioning 60000 rows (MNIST-sized) into 10 clients.
void BM_IidPartition(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(asyncdp::data::IidPartition(60000, 10, 7));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 60000);
}
BENCHMARK(BM_IidPartition)->Unit(benchmark::kMicrosecond);

void BM_DirichletPartition(benchmark::State& state) {
  std::vector<int32_t> labels(60000);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % 10);
  asyncdp::data::PartitionOptions options;
  options.scheme = asyncdp::data::PartitionScheme::kDirichlet;
  options.num_clients = 10;
  options.dirichlet_alpha = 0.5;
  options.seed = 7;
  for (auto _ : state) benchmark::DoNotOptimize(asyncdp::data::DirichletPartition(labels, 10, options));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 60000);
}
BENCHMARK(BM_DirichletPartition)->Unit(benchmark::kMicrosecond);

}  // namespace
