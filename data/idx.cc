#include "data/idx.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "data/file_contents.h"
#include "data/huge_pages.h"

namespace asyncdp::data {
namespace {

constexpr const char* kImagesWhat = "unsigned-byte images, 3 dimensions";
constexpr const char* kLabelsWhat = "unsigned-byte labels, 1 dimension";

struct IdxHeader {
  std::vector<int64_t> dims;
  int64_t payload_offset = 0;  // bytes of header
};

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Validates the magic and the dimensions (none 0); the header must be complete in `bytes`.
IdxHeader ParseHeaderFields(std::string_view bytes, const std::string& source, uint32_t expected_magic,
                            const char* what) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto size = static_cast<int64_t>(bytes.size());
  if (size < 4) {
    throw BinaryFormatError(
        source, size,
        "expected a 4-byte IDX magic number, but the file has only " + std::to_string(size) + " bytes");
  }
  const uint32_t magic = BigEndian32(data);
  if (magic != expected_magic) {
    std::string hint;
    if (magic == kIdxLabelsMagic) hint = " (this is an IDX labels file)";
    if (magic == kIdxImagesMagic) hint = " (this is an IDX images file)";
    if (hint.empty() && IsIdxMagic(magic)) {
      hint = " (an IDX file of element type 0x" + Hex32(magic).substr(6, 2) + " with " +
             std::to_string(magic & 0xff) + " dimensions; only unsigned bytes are supported)";
    }
    throw BinaryFormatError(
        source, 0,
        "expected IDX magic " + Hex32(expected_magic) + " (" + what + "), got " + Hex32(magic) + hint);
  }
  IdxHeader header;
  const int ndims = static_cast<int>(expected_magic & 0xff);
  header.payload_offset = 4 + 4 * int64_t{ndims};
  if (size < header.payload_offset) {
    throw BinaryFormatError(source, size,
                            "truncated IDX header: expected " + std::to_string(ndims) +
                                " 4-byte dimension sizes after the magic number");
  }
  for (int i = 0; i < ndims; ++i) {
    const int64_t dim = BigEndian32(data + 4 + 4 * i);
    if (dim == 0) {
      throw BinaryFormatError(source, 4 + 4 * i, "IDX dimension " + std::to_string(i) + " is 0");
    }
    header.dims.push_back(dim);
  }
  return header;
}

// Validates magic, dimensions and the exact file size (header + product of dims, one byte per element).
IdxHeader ParseHeader(std::string_view bytes, const std::string& source, uint32_t expected_magic,
                      const char* what) {
  IdxHeader header = ParseHeaderFields(bytes, source, expected_magic, what);
  const auto size = static_cast<int64_t>(bytes.size());
  // The product saturates just above the available byte count, so it cannot overflow int64.
  int64_t elements = 1;
  const int64_t available = size - header.payload_offset;
  for (int64_t dim : header.dims) elements = elements > available / dim ? available + 1 : elements * dim;
  const int64_t expected_size = header.payload_offset + elements;
  if (elements > available) {
    std::string shape;
    for (int64_t d : header.dims) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    throw BinaryFormatError(source, size,
                            "truncated IDX file: the header declares " + shape +
                                " bytes of data, but the file ends after " + std::to_string(available) +
                                " of them");
  }
  if (size > expected_size) {
    throw BinaryFormatError(source, expected_size,
                            "expected the end of the IDX file after " + std::to_string(expected_size) +
                                " bytes, found " + std::to_string(size - expected_size) + " more bytes");
  }
  return header;
}

bool ReplaceLast(std::string& name, std::string_view from, std::string_view to) {
  const size_t pos = name.rfind(from);
  if (pos == std::string::npos) return false;
  name.replace(pos, from.size(), to);
  return true;
}

}  // namespace

uint32_t IdxMagic(std::string_view bytes) {
  if (bytes.size() < 4) return 0;
  return BigEndian32(reinterpret_cast<const unsigned char*>(bytes.data()));
}

bool IsIdxMagic(uint32_t magic) {
  const uint32_t type = (magic >> 8) & 0xff;
  const bool known_type = type == 0x08 || type == 0x09 || (type >= 0x0B && type <= 0x0E);
  return (magic >> 16) == 0 && known_type && (magic & 0xff) != 0;
}

std::vector<int64_t> IdxDeclaredDims(std::string_view header, const std::string& source,
                                     uint32_t expected_magic) {
  const char* what = expected_magic == kIdxImagesMagic   ? kImagesWhat
                     : expected_magic == kIdxLabelsMagic ? kLabelsWhat
                                                         : "IDX";
  return ParseHeaderFields(header, source, expected_magic, what).dims;
}

void CheckIdxImages(std::string_view images, const std::string& source) {
  ParseHeader(images, source, kIdxImagesMagic, kImagesWhat);
}

Dataset ParseIdxPair(std::string_view images, const std::string& images_source, std::string_view labels,
                     const std::string& labels_source, const IdxOptions& options) {
  if (options.num_classes < 1 || options.num_classes > 256) {
    throw ConfigError("num_classes",
                      "expected 1..256 classes for byte labels, got " + std::to_string(options.num_classes));
  }
  const IdxHeader image_header = ParseHeader(images, images_source, kIdxImagesMagic, kImagesWhat);
  const IdxHeader label_header =
      ParseHeader(labels, labels_source, kIdxLabelsMagic, kLabelsWhat);
  const int64_t rows = image_header.dims[0];
  if (label_header.dims[0] != rows) {
    throw BinaryFormatError(labels_source, 4,
                            "label count " + std::to_string(label_header.dims[0]) +
                                " does not match the image count " + std::to_string(rows) + " of " +
                                images_source);
  }
  const auto* label_bytes =
      reinterpret_cast<const unsigned char*>(labels.data()) + label_header.payload_offset;
  Dataset out;
  out.source = images_source;
  out.format = DataFormat::kIdx;
  out.is_sparse = false;
  out.labels.resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    if (label_bytes[r] >= options.num_classes) {
      throw BinaryFormatError(labels_source, label_header.payload_offset + r,
                              "label " + std::to_string(label_bytes[r]) + " of item " + std::to_string(r) +
                                  " is out of range 0.." + std::to_string(options.num_classes - 1));
    }
    out.labels[r] = label_bytes[r];
  }
  for (int c = 0; c < options.num_classes; ++c) out.class_names.push_back(std::to_string(c));

  const int64_t height = image_header.dims[1];
  const int64_t width = image_header.dims[2];
  out.image = ImageShape{1, static_cast<int>(height), static_cast<int>(width)};
  const auto* pixels = reinterpret_cast<const unsigned char*>(images.data()) + image_header.payload_offset;
  out.dense.resize(rows, height * width);
  AdviseHugePages(out.dense.data(), sizeof(float) * static_cast<size_t>(out.dense.size()));  // before the first write
  float* dst = out.dense.data();
  const int64_t total = rows * height * width;
  for (int64_t i = 0; i < total; ++i) dst[i] = static_cast<float>(pixels[i]) * kPixelScale;
  return out;
}

Dataset LoadIdxPair(const std::string& images_path, const std::string& labels_path,
                    const IdxOptions& options) {
  const std::string images = ReadFileContents(images_path);
  const std::string labels = ReadFileContents(labels_path);
  return ParseIdxPair(images, images_path, labels, labels_path, options);
}

std::string IdxLabelsPathFor(const std::string& images_path) {
  const std::filesystem::path path(images_path);
  std::string name = path.filename().string();
  if (!ReplaceLast(name, "images-idx3-ubyte", "labels-idx1-ubyte") &&
      !ReplaceLast(name, "images.idx3-ubyte", "labels.idx1-ubyte")) {
    return {};
  }
  const std::filesystem::path primary = path.parent_path() / name;
  std::error_code ec;
  if (std::filesystem::exists(primary, ec)) return primary.string();
  const bool gz = name.size() > 3 && name.ends_with(".gz");
  const std::filesystem::path alternative =
      path.parent_path() / (gz ? name.substr(0, name.size() - 3) : name + ".gz");
  if (std::filesystem::exists(alternative, ec)) return alternative.string();
  return primary.string();
}

}  // namespace asyncdp::data
