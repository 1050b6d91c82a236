#include "data/load.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/check.h"
#include "core/error.h"
#include "data/cifar.h"
#include "data/file_contents.h"
#include "data/idx.h"
#include "data/libsvm.h"

namespace asyncdp::data {

namespace {

// Bytes of decompressed content that format detection and the IDX images header need (magic and three
// 4-byte dimensions).
constexpr size_t kHeadBytes = 16;

// CIFAR-10 by content: a positive multiple of 3073 bytes whose every record starts with a label byte 0..9.
// Text never has a byte below 9 (tab), so either the name says .bin / .bin.gz, or some record's label byte
// is below 9, which no text file has.
bool LooksLikeCifar(const std::string& path, std::string_view contents) {
  const auto size = static_cast<int64_t>(contents.size());
  if (size == 0 || size % kCifar10RecordBytes != 0) return false;
  bool binary_byte = false;
  for (int64_t offset = 0; offset < size; offset += kCifar10RecordBytes) {
    const auto label = static_cast<unsigned char>(contents[offset]);
    if (label >= kCifar10Classes) return false;
    binary_byte = binary_byte || label < 9;
  }
  const std::string name = path.ends_with(".gz") ? path.substr(0, path.size() - 3) : path;
  return binary_byte || name.ends_with(".bin");
}

// One-class training data train a classifier that predicts that class everywhere: legal, but almost
// always a mistake (a wrong file, a filter that dropped the other class), so it is said on stderr.
void WarnIfOneClass(const Dataset& dataset) {
  if (dataset.rows() == 0) return;
  const std::vector<int64_t> counts = ClassCounts(dataset);
  int64_t present = 0;
  for (int64_t n : counts) present += n > 0 ? 1 : 0;
  if (present == 1) {
    const size_t c = std::find_if(counts.begin(), counts.end(), [](int64_t n) { return n > 0; }) - counts.begin();
    spdlog::warn("{}: every one of its {} rows has label '{}': a classifier trained on one class learns nothing",
                 dataset.source, dataset.rows(), dataset.class_names[c]);
  }
}

Dataset LoadIdx(const std::string& path, std::string raw, std::string_view head, const DataLoadOptions& options) {
  const bool gz = HasGzipMagic(raw);
  // A wrong file fails on its own header, not on a missing sibling; the counts are compared before a large
  // images file is decompressed.
  const std::vector<int64_t> dims = IdxDeclaredDims(head, path, kIdxImagesMagic);
  if (gz) {
    int64_t declared = 1;  // saturating product of the dimensions
    for (int64_t d : dims) declared = declared > (int64_t{1} << 62) / d ? (int64_t{1} << 62) : declared * d;
    const auto most = static_cast<int64_t>(kMaxGzipRatio * static_cast<uint64_t>(raw.size()));
    if (declared > most) {
      throw BinaryFormatError(path, 4,
                              "the IDX header declares " + std::to_string(dims[0]) + " images (" +
                                  std::to_string(declared) + " bytes), more than a " + std::to_string(raw.size()) +
                                  "-byte gzip file can hold: the file is truncated or the header is corrupt");
    }
  } else {
    CheckIdxImages(raw, path);
  }
  const std::string labels_path = options.labels_path.empty() ? IdxLabelsPathFor(path) : options.labels_path;
  if (labels_path.empty()) {
    throw InputError(path,
                     "cannot infer the IDX labels file (expected a name containing "
                     "'images-idx3-ubyte'); pass it with --labels");
  }
  const std::string labels = ReadFileContents(labels_path);
  const std::vector<int64_t> label_dims = IdxDeclaredDims(labels, labels_path, kIdxLabelsMagic);
  if (label_dims[0] != dims[0]) {
    throw BinaryFormatError(labels_path, 4,
                            "label count " + std::to_string(label_dims[0]) + " does not match the image count " +
                                std::to_string(dims[0]) + " declared by " + path);
  }
  if (gz) raw = Gunzip(raw, path);
  return ParseIdxPair(raw, path, labels, labels_path);
}

}  // namespace

DataFormat DetectFormat(const std::string& path, std::string_view contents) {
  const uint32_t magic = IdxMagic(contents);
  if (magic == kIdxLabelsMagic) {
    throw InputError(path,
                     "this is an IDX labels file (magic 0x00000801); pass the images file "
                     "(magic 0x00000803), with --labels if its labels file is not the sibling");
  }
  if (IsIdxMagic(magic)) return DataFormat::kIdx;
  if (LooksLikeCifar(path, contents)) return DataFormat::kCifar;
  // A binary .bin file (a byte below 9, which no text has) is CIFAR-10's by name: parsed as such, a bad one
  // gets CIFAR's precise error (the byte count, the record whose label is out of range), not a LIBSVM error
  // about a '<binary>' label. A .bin holding text stays LIBSVM.
  const std::string name = path.ends_with(".gz") ? path.substr(0, path.size() - 3) : path;
  const std::string_view head = contents.substr(0, std::min<size_t>(contents.size(), 65536));
  const bool binary = std::any_of(head.begin(), head.end(), [](char ch) { return static_cast<unsigned char>(ch) < 9; });
  if (name.ends_with(".bin") && binary) return DataFormat::kCifar;
  return DataFormat::kLibsvm;
}

Dataset LoadDataset(const std::string& path, const DataLoadOptions& options) {
  if (options.format == DataFormat::kSynthetic) {
    throw ConfigError("format", "synthetic data sets are made in memory; " + path + " cannot be read as one");
  }
  std::string raw = ReadFileBytes(path);
  const bool gz = HasGzipMagic(raw);
  const std::string head = gz ? GunzipPrefix(raw, kHeadBytes, path) : raw.substr(0, kHeadBytes);
  DataFormat format = options.format;
  // IDX is recognised from the header alone; CIFAR and LIBSVM need the whole content.
  if (format == DataFormat::kAuto && IsIdxMagic(IdxMagic(head))) format = DetectFormat(path, head);
  if (format == DataFormat::kIdx) {
    if (options.num_features != 0) {
      throw ConfigError("features", "a feature count applies to LIBSVM files only, but " + path + " is read as idx");
    }
    Dataset dataset = LoadIdx(path, std::move(raw), head, options);
    WarnIfOneClass(dataset);
    return dataset;
  }
  const std::string contents = gz ? Gunzip(raw, path) : std::move(raw);
  if (format == DataFormat::kAuto) format = DetectFormat(path, contents);
  if (format != DataFormat::kLibsvm && options.num_features != 0) {
    throw ConfigError("features", "a feature count applies to LIBSVM files only, but " + path +
                                      " is read as " + std::string(ToString(format)));
  }
  if (format != DataFormat::kIdx && !options.labels_path.empty()) {
    throw ConfigError("labels", "a separate labels file applies to IDX files only, but " + path +
                                    " is read as " + std::string(ToString(format)));
  }
  Dataset dataset;
  switch (format) {
    case DataFormat::kLibsvm: {
      LibsvmOptions libsvm;
      libsvm.num_features = options.num_features;
      if (options.rows_to_hold) {
        LibsvmOptions labels_only = libsvm;
        labels_only.labels_only = true;
        libsvm.rows_held = options.rows_to_hold(ParseLibsvm(contents, path, labels_only));
      }
      dataset = ParseLibsvm(contents, path, libsvm);
      break;
    }
    case DataFormat::kCifar:
      dataset = ParseCifar10(contents, path);
      break;
    case DataFormat::kIdx:  // handled above
    case DataFormat::kSynthetic:  // refused above
    case DataFormat::kAuto:
      ASYNCDP_CHECK_MSG(false, "kIdx and kSynthetic are handled above; DetectFormat never returns kAuto");
  }
  WarnIfOneClass(dataset);
  return dataset;
}

}  // namespace asyncdp::data
