#include "data/file_contents.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>

#include "core/error.h"
#include "data/huge_pages.h"

namespace asyncdp::data {
namespace {

// Output grows by at least this much per step: few reallocations, and each inflate() call gets a large
// output window, which is what makes zlib fast.
constexpr size_t kMinGrowBytes = size_t{1} << 20;
// zlib counts in uInt (32 bits): feed input and offer output in slices no larger than this.
constexpr size_t kMaxZlibSlice = size_t{1} << 30;

struct InflateDeleter {
  void operator()(z_stream* zs) const {
    inflateEnd(zs);
    delete zs;
  }
};

// ISIZE (RFC 1952 §2.3.1): the last member's uncompressed size mod 2^32, little-endian in the last 4 bytes.
size_t CapacityHint(std::string_view compressed) {
  if (compressed.size() < 18) return kMinGrowBytes;  // 10-byte header + 8-byte trailer minimum
  const auto* tail = reinterpret_cast<const unsigned char*>(compressed.data() + compressed.size() - 4);
  const uint64_t isize =
      uint64_t{tail[0]} | (uint64_t{tail[1]} << 8) | (uint64_t{tail[2]} << 16) | (uint64_t{tail[3]} << 24);
  const uint64_t cap = kMaxGzipRatio * static_cast<uint64_t>(compressed.size());
  return static_cast<size_t>(std::max<uint64_t>(std::min(isize, cap), 1));
}

}  // namespace

bool HasGzipMagic(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string Gunzip(std::string_view compressed, const std::string& source) {
  std::unique_ptr<z_stream, InflateDeleter> zs(new z_stream{});
  // 16 + MAX_WBITS: expect a gzip wrapper and verify its CRC-32 and ISIZE trailer.
  if (inflateInit2(zs.get(), 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();

  const auto* base = reinterpret_cast<const unsigned char*>(compressed.data());
  const size_t total_in = compressed.size();
  size_t consumed = 0;  // bytes of `compressed` handed to zlib and used
  std::string out;
  ResizeWithHugePages(out, CapacityHint(compressed));
  size_t produced = 0;

  for (;;) {
    if (produced == out.size()) ResizeWithHugePages(out, std::max(out.size() * 2, out.size() + kMinGrowBytes));
    const size_t in_slice = std::min(total_in - consumed, kMaxZlibSlice);
    const size_t out_slice = std::min(out.size() - produced, kMaxZlibSlice);
    zs->next_in = const_cast<unsigned char*>(base + consumed);  // zlib's API is not const-correct
    zs->avail_in = static_cast<uInt>(in_slice);
    zs->next_out = reinterpret_cast<unsigned char*>(out.data() + produced);
    zs->avail_out = static_cast<uInt>(out_slice);

    const int ret = inflate(zs.get(), Z_NO_FLUSH);
    consumed += in_slice - zs->avail_in;
    produced += out_slice - zs->avail_out;

    if (ret == Z_STREAM_END) {
      if (consumed == total_in) break;
      if (!HasGzipMagic(compressed.substr(consumed))) {
        throw BinaryFormatError(source, static_cast<int64_t>(consumed),
                                "expected end of file or another gzip member after the gzip trailer, "
                                "found other bytes");
      }
      inflateReset(zs.get());  // the next member of a concatenated gzip file
      continue;
    }
    if (ret == Z_DATA_ERROR) {
      // zs->msg names what zlib found: "incorrect header check", "invalid distance too far back",
      // "incorrect data check" (CRC mismatch), ... The offset is where zlib noticed it.
      throw BinaryFormatError(source, static_cast<int64_t>(consumed),
                              std::string("corrupt gzip stream: ") + (zs->msg ? zs->msg : "invalid data"));
    }
    if (ret == Z_MEM_ERROR) throw std::bad_alloc();
    // Z_OK or Z_BUF_ERROR: zlib wants more input or more output. If it had room to write and every input
    // byte, yet did not reach the end marker, the stream is cut short.
    if (consumed == total_in && zs->avail_out > 0) {
      throw BinaryFormatError(source, static_cast<int64_t>(total_in),
                              "truncated gzip stream: the file ends before the end of the compressed data");
    }
  }
  out.resize(produced);
  return out;
}

std::string GunzipPrefix(std::string_view compressed, size_t max_bytes, const std::string& source) {
  std::unique_ptr<z_stream, InflateDeleter> zs(new z_stream{});
  if (inflateInit2(zs.get(), 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  const auto* base = reinterpret_cast<const unsigned char*>(compressed.data());
  const size_t total_in = std::min(compressed.size(), kMaxZlibSlice);
  std::string out(std::min(max_bytes, kMaxZlibSlice), '\0');
  size_t consumed = 0;
  size_t produced = 0;
  while (produced < out.size() && consumed < total_in) {
    zs->next_in = const_cast<unsigned char*>(base + consumed);  // zlib's API is not const-correct
    zs->avail_in = static_cast<uInt>(total_in - consumed);
    zs->next_out = reinterpret_cast<unsigned char*>(out.data() + produced);
    zs->avail_out = static_cast<uInt>(out.size() - produced);
    const int ret = inflate(zs.get(), Z_NO_FLUSH);
    consumed = total_in - zs->avail_in;
    produced = out.size() - zs->avail_out;
    if (ret == Z_DATA_ERROR) {
      throw BinaryFormatError(source, static_cast<int64_t>(consumed),
                              std::string("corrupt gzip stream: ") + (zs->msg ? zs->msg : "invalid data"));
    }
    if (ret == Z_MEM_ERROR) throw std::bad_alloc();
    if (ret == Z_STREAM_END) {
      if (consumed == total_in) break;
      if (!HasGzipMagic(compressed.substr(consumed))) {
        throw BinaryFormatError(source, static_cast<int64_t>(consumed),
                                "expected end of file or another gzip member after the gzip trailer, "
                                "found other bytes");
      }
      inflateReset(zs.get());  // the next member of a concatenated gzip file
      continue;
    }
    if (ret != Z_OK) break;  // Z_BUF_ERROR: the input ends early; what was produced is the prefix
  }
  out.resize(produced);
  return out;
}

std::string ReadFileBytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, "cannot read: is a directory, expected a data file");
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));

  // Read in one go when the size is known; keep reading until EOF in case the file grew or is a pipe.
  const auto size = std::filesystem::file_size(path, ec);
  std::string bytes;
  ResizeWithHugePages(bytes, ec ? kMinGrowBytes : static_cast<size_t>(size) + 1);
  size_t filled = 0;
  for (;;) {
    if (filled == bytes.size()) ResizeWithHugePages(bytes, bytes.size() * 2);
    const size_t n = std::fread(bytes.data() + filled, 1, bytes.size() - filled, file.get());
    filled += n;
    if (n == 0) break;
  }
  if (std::ferror(file.get())) throw InputError(path, std::string("read failed: ") + std::strerror(errno));
  bytes.resize(filled);
  return bytes;
}

std::string ReadFileContents(const std::string& path) {
  std::string bytes = ReadFileBytes(path);
  if (HasGzipMagic(bytes)) return Gunzip(bytes, path);
  return bytes;
}

std::string_view StripUtf8Bom(std::string_view text) {
  return text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text;
}

std::string ReadTextFile(const std::string& path) {
  std::string text = ReadFileContents(path);
  if (StripUtf8Bom(text).size() != text.size()) text.erase(0, 3);
  return text;
}

}  // namespace asyncdp::data
