// One entry point for every supported data format, with detection by content.
//
// Auto-detection looks at the decompressed bytes (gzip is recognised by its magic, see
// data/file_contents.h), in this order:
//  1. IDX: any IDX magic number (IsIdxMagic), read from the first decompressed bytes only. The images
//     parser accepts 0x00000803 (unsigned-byte images) and names the type of any other; a labels file
//     (0x00000801) is rejected with a hint to pass the images file. The labels come from
//     DataLoadOptions::labels_path or IdxLabelsPathFor, and their count is compared with the images
//     header's before a gzipped images file is decompressed (a header no gzip file of that size could
//     hold is refused too).
//  2. CIFAR-10 binary: a positive multiple of 3073 bytes, every record's first byte a label 0..9, and
//     either the name ends in ".bin" / ".bin.gz" or some label byte is below 9 (no text file has one).
//  3. Otherwise LIBSVM text (a leading UTF-8 byte-order mark is skipped).
// A training set whose rows all have one label loads, with a warning on stderr (spdlog).
// A file that does not parse in the detected format reports that format's error; pass an explicit
// format to override the detection (e.g. a LIBSVM file that happens to be named *.bin).
// Generic readers for a known format: ReadLibsvm (data/libsvm.h), LoadIdxPair (data/idx.h),
// ReadCifar10 (data/cifar.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "data/data_format.h"
#include "data/dataset.h"

namespace asyncdp::data {

struct DataLoadOptions {
  DataFormat format = DataFormat::kAuto;  // default: detect from the content (see above)
  // LIBSVM only: the feature count d (0 = infer the largest index). Setting it for another format is a
  // ConfigError rather than being ignored.
  int64_t num_features = 0;
  // IDX only: the labels file. Empty (default) = the sibling file named by IdxLabelsPathFor. Setting it
  // for another format is a ConfigError.
  std::string labels_path;
  // LIBSVM only, optional: a process that needs some rows' features (an MPI rank: its clients' rows). The
  // file is decompressed once and parsed twice: first keeping no features (labels, classes and feature count
  // as a full read gives), then keeping only the rows this function marks (LibsvmOptions::rows_held).
  // Not called for other formats, which are read whole.
  std::function<std::vector<bool>(const Dataset& labels_only)> rows_to_hold;
};

// The format of `contents` (the decompressed bytes of the file at `path`) by the rules above. Never
// returns kAuto.
DataFormat DetectFormat(const std::string& path, std::string_view contents);

// Reads `path` in options.format (detected when kAuto). Throws the reader's InputError subclass for bad
// input and ConfigError for options that do not apply to the format.
Dataset LoadDataset(const std::string& path, const DataLoadOptions& options = {});

}  // namespace asyncdp::data
