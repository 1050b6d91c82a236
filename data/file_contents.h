// Reading a whole data file into memory, transparently gunzipping it.
//
// Every reader in data/ parses from an in-memory buffer: the parsers stay pure functions of
// (bytes, source name) that tests can feed directly, and format detection (data/load.h) looks at the
// decompressed bytes once without reading the file twice. Gzip is recognised by its magic bytes
// (1f 8b), never by the file name, so `a9a.gz` renamed to `a9a` still loads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace asyncdp::data {

// Deflate cannot compress better than about 1032:1: a gzip file of n bytes holds at most 1032·n bytes.
inline constexpr uint64_t kMaxGzipRatio = 1032;

// True when `bytes` starts with the gzip magic number 1f 8b (RFC 1952 §2.3.1).
bool HasGzipMagic(std::string_view bytes);

// The decompressed content of a gzip stream. Concatenated members (as `cat a.gz b.gz` produces) are
// decompressed one after the other, as gzip(1) does. Inflation runs in large chunks straight into the
// output buffer; the last member's ISIZE trailer is only used as a capacity hint.
// Throws BinaryFormatError(source, compressed byte offset, ...) for a corrupt or truncated stream and for
// bytes after the last member that are not another gzip member.
std::string Gunzip(std::string_view compressed, const std::string& source);

// At most the first `max_bytes` of the decompressed content of a gzip stream, inflating no more than that
// (a header can be checked before a large file is decompressed). Fewer bytes when the content is shorter.
// Throws BinaryFormatError like Gunzip for a corrupt start.
std::string GunzipPrefix(std::string_view compressed, size_t max_bytes, const std::string& source);

// The raw bytes of the file at `path` (not decompressed). Throws InputError(path, ...) when the file
// cannot be opened or read (missing, a directory, no permission).
std::string ReadFileBytes(const std::string& path);

// The whole content of the file at `path`, gunzipped when it starts with the gzip magic.
// Throws InputError(path, ...) when the file cannot be opened or read (missing, a directory, no
// permission) and BinaryFormatError for a bad gzip stream.
std::string ReadFileContents(const std::string& path);

// `text` without a leading UTF-8 byte-order mark (EF BB BF), which some editors write at the start of
// CSV and text files; text parsers call this so that a BOM never becomes part of the first token.
std::string_view StripUtf8Bom(std::string_view text);

// ReadFileContents(path) for a text input (CSV, LIBSVM), with a leading UTF-8 BOM removed.
std::string ReadTextFile(const std::string& path);

}  // namespace asyncdp::data
