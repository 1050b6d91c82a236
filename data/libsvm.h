// LIBSVM / SVMlight text reader: `label index:value index:value ...`, one example per line.
//
// Accepted syntax (the parser is strict: anything else is a ParseError with FILE:LINE:COL):
//  - Indices are 1-based, strictly increasing within a line, at most 2^31-1 (int32 CSR storage).
//    Column j of the matrix holds feature index j+1.
//  - Values are decimal floats as std::from_chars reads them (`1`, `-0.5`, `1e-3`, `.5`), with an optional
//    leading `+`; they must be finite and representable as float (NaN, Inf and overflow are rejected).
//  - Explicit zeros (`13:0.0`) are KEPT as stored entries, so nnz counts stored entries, the CSR structure
//    matches the file, and `data info` reports what the file contains (ijcnn1.t has 12 of them).
//  - Labels are numbers with an integer value (`+1`, `-1`, `-1.0`, `1.0`, `0`, `7`). Classes are the
//    distinct label values in increasing numeric order: binary {-1,+1} or {0,1} become {0,1}; integer
//    classes 0..9 stay 0..9. Dataset::class_names records the first spelling of each value in the file.
//    Labels are matched by value, so `1.0` in a training file and `1` in its test file are one class.
//  - A line may hold only a label (no features). `#` starts a comment (whole line or after the features);
//    blank lines and trailing spaces/tabs are ignored; a `\r` before `\n` is accepted (CRLF files).
//  - A leading UTF-8 byte-order mark is skipped (columns of line 1 count from the character after it).
//  - At least one example is required.
// Performance: one pass over an in-memory buffer with std::from_chars, no per-line allocation; the output
// CSR arrays grow geometrically. Measured in bench/data_bench.cc (BM_LibsvmParse).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"

namespace asyncdp::data {

struct LibsvmOptions {
  // Number of feature columns d. 0 (default) = infer d as the largest index present. When > 0, an index
  // above it is an error, and d columns are produced even if the last features never occur (a9a.t never
  // uses feature 123 of a9a's 123).
  int64_t num_features = 0;
  // Fixed class mapping. Empty (default) = derive the classes from this file's labels. Non-empty = class c
  // is the label whose numeric value equals that of class_names[c]; a label with any other value is an
  // error. Use this to read a test file with its training file's mapping (see LibsvmOptionsLike), so a
  // test file that lacks a class, or spells `1.0` as `1`, still maps identically.
  std::vector<std::string> class_names;
  // Empty (default): keep every row. Otherwise one entry per example of the file: only rows with
  // rows_held[r] keep their features (Dataset::held). Every row is still parsed and checked, so the classes,
  // the inferred feature count and every error are those of a full read; the memory is that of the held
  // rows. A size that does not match the file's examples is a ConfigError.
  std::vector<bool> rows_held;
  // Keep no row's features (rows_held all false, whatever its size): the labels, classes and feature count
  // of the file at the memory of its labels, e.g. to decide rows_held for a second read.
  bool labels_only = false;
};

// Parses LIBSVM text already in memory. `source` names the input in error messages (normally the path).
// Throws ParseError(source, line, column, "expected ...") on malformed input, ConfigError for bad options.
Dataset ParseLibsvm(std::string_view text, const std::string& source, const LibsvmOptions& options = {});

// Reads a LIBSVM file, plain or gzip-compressed (detected by magic bytes). Throws InputError subclasses.
Dataset ReadLibsvm(const std::string& path, const LibsvmOptions& options = {});

// Options that read another file (e.g. the test split) with `reference`'s feature count and class mapping.
LibsvmOptions LibsvmOptionsLike(const Dataset& reference);

// ReadLibsvm(path, LibsvmOptionsLike(reference)).
Dataset ReadLibsvmLike(const std::string& path, const Dataset& reference);

}  // namespace asyncdp::data
