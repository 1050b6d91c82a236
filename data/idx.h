// IDX reader (the MNIST / Fashion-MNIST format, http://yann.lecun.com/exdb/mnist/): an images file
// (magic 0x00000803: unsigned bytes, 3 dimensions N × H × W) and a labels file (magic 0x00000801:
// unsigned bytes, 1 dimension N). Integers in the header are big-endian. Either file may be gzipped
// (detected by magic bytes).
//
// The result is a dense data set: row r is image r flattened row-major (CHW with C = 1), pixels scaled
// from 0..255 to [0, 1]; Dataset::image = {1, H, W}; class_names = "0", "1", ..., as written in the file.
// Errors are BinaryFormatError(file, byte offset, ...): wrong magic, short header, zero dimension,
// truncated or over-long payload, image/label count mismatch, label out of range.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"

namespace asyncdp::data {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;  // ubyte, 3 dims
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;  // ubyte, 1 dim

struct IdxOptions {
  // Number of classes K; a label byte >= K is an error (never silently widened). Default 10: MNIST,
  // Fashion-MNIST and EMNIST-digits. class_names are "0" .. "K-1" whether or not every class occurs.
  int num_classes = 10;
};

// The first four bytes as a big-endian integer (the IDX magic number); 0 when there are fewer than four.
uint32_t IdxMagic(std::string_view bytes);

// Whether `magic` is an IDX magic number of any element type: two zero bytes, a type code (0x08 ubyte,
// 0x09 sbyte, 0x0B short, 0x0C int, 0x0D float, 0x0E double) and 1..255 dimensions. Format detection
// uses it, so an IDX file of an unsupported type is reported as such rather than parsed as text.
bool IsIdxMagic(uint32_t magic);

// The dimensions an IDX header declares, read from the first bytes of a file (the whole header suffices,
// no payload needed): checks the magic against `expected_magic` and that no dimension is 0. Lets a loader
// compare image and label counts before it decompresses a large images file.
std::vector<int64_t> IdxDeclaredDims(std::string_view header, const std::string& source, uint32_t expected_magic);

// Parses an images/labels pair already in memory (decompressed). `*_source` name them in errors.
Dataset ParseIdxPair(std::string_view images, const std::string& images_source, std::string_view labels,
                     const std::string& labels_source, const IdxOptions& options = {});

// Checks an images file's header and size alone, throwing the BinaryFormatError ParseIdxPair would; lets a
// caller reject a non-IDX file before it goes looking for the labels file.
void CheckIdxImages(std::string_view images, const std::string& source);

// Reads an images/labels pair, each plain or gzipped.
Dataset LoadIdxPair(const std::string& images_path, const std::string& labels_path,
                    const IdxOptions& options = {});

// The labels file that accompanies an images file by the MNIST naming convention:
// "dir/t10k-images-idx3-ubyte.gz" → "dir/t10k-labels-idx1-ubyte.gz" (also "images.idx3-ubyte" →
// "labels.idx1-ubyte"). If that file is missing but the same name with ".gz" added or removed exists, the
// latter is returned. Empty when the file name follows neither convention.
std::string IdxLabelsPathFor(const std::string& images_path);

}  // namespace asyncdp::data
