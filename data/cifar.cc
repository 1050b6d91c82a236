#include "data/cifar.h"

#include <vector>

#include "core/check.h"
#include "core/error.h"
#include "data/file_contents.h"
#include "data/huge_pages.h"

namespace asyncdp::data {
namespace {

// Checks the record structure and every label of one batch; returns its record count.
int64_t ValidateBatch(std::string_view bytes, const std::string& source) {
  const auto size = static_cast<int64_t>(bytes.size());
  if (size == 0) {
    throw BinaryFormatError(source, 0, "expected at least one 3073-byte CIFAR-10 record, the file is empty");
  }
  if (size % kCifar10RecordBytes != 0) {
    const int64_t last_start = size - size % kCifar10RecordBytes;
    throw BinaryFormatError(source, last_start,
                            "truncated CIFAR-10 record: the file has " + std::to_string(size) +
                                " bytes, not a multiple of 3073 (1 label byte + 3072 pixel bytes); the "
                                "record starting here has only " +
                                std::to_string(size - last_start) + " bytes");
  }
  const int64_t records = size / kCifar10RecordBytes;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  for (int64_t r = 0; r < records; ++r) {
    const int label = data[r * kCifar10RecordBytes];
    if (label >= kCifar10Classes) {
      throw BinaryFormatError(
          source, r * kCifar10RecordBytes,
          "label " + std::to_string(label) + " of record " + std::to_string(r) + " is out of range 0..9");
    }
  }
  return records;
}

Dataset EmptyCifar(int64_t rows, std::string source) {
  Dataset out;
  out.source = std::move(source);
  out.format = DataFormat::kCifar;
  out.is_sparse = false;
  out.image = ImageShape{3, 32, 32};
  for (int c = 0; c < kCifar10Classes; ++c) out.class_names.push_back(std::to_string(c));
  out.labels.reserve(rows);
  out.dense.resize(rows, kCifar10PixelBytes);
  AdviseHugePages(out.dense.data(), sizeof(float) * static_cast<size_t>(out.dense.size()));  // before the first write
  return out;
}

// Appends the (validated) records of `bytes` to `out`, starting at row `first_row`.
void ConvertBatch(std::string_view bytes, int64_t first_row, Dataset& out) {
  const int64_t records = static_cast<int64_t>(bytes.size()) / kCifar10RecordBytes;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  for (int64_t r = 0; r < records; ++r) {
    const unsigned char* record = data + r * kCifar10RecordBytes;
    out.labels.push_back(record[0]);
    float* dst = out.dense.data() + (first_row + r) * kCifar10PixelBytes;
    for (int64_t i = 0; i < kCifar10PixelBytes; ++i) dst[i] = static_cast<float>(record[1 + i]) * kPixelScale;
  }
}

}  // namespace

Dataset ParseCifar10(std::string_view bytes, const std::string& source) {
  const int64_t rows = ValidateBatch(bytes, source);
  Dataset out = EmptyCifar(rows, source);
  ConvertBatch(bytes, 0, out);
  return out;
}

Dataset ReadCifar10(std::span<const std::string> paths) {
  if (paths.empty()) throw InputError("", "expected at least one CIFAR-10 batch file");
  std::vector<std::string> batches;
  batches.reserve(paths.size());
  int64_t rows = 0;
  std::string source;
  for (const std::string& path : paths) {
    batches.push_back(ReadFileContents(path));
    rows += ValidateBatch(batches.back(), path);
    source += (source.empty() ? "" : ", ") + path;
  }
  Dataset out = EmptyCifar(rows, source);
  int64_t first_row = 0;
  for (std::string& batch : batches) {
    ConvertBatch(batch, first_row, out);
    first_row += static_cast<int64_t>(batch.size()) / kCifar10RecordBytes;
    std::string().swap(batch);  // release the raw bytes as soon as they are converted
  }
  ASYNCDP_CHECK(first_row == rows);
  return out;
}

}  // namespace asyncdp::data
