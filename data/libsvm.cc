#include "data/libsvm.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "core/check.h"
#include "core/error.h"
#include "data/file_contents.h"

namespace asyncdp::data {
namespace {

constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();  // int32 CSR column indices
constexpr size_t kMaxQuotedChars = 40;  // how much of a bad token an error message repeats

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }
// A token (label, index:value) ends at a blank, the end of the line, or a comment.
inline bool IsTokenEnd(char c) { return IsBlank(c) || c == '\n' || c == '\r' || c == '#'; }

std::string Quote(std::string_view token) {
  // Built by append: GCC 12 warns falsely (-Wrestrict) on "'" + std::string(...).
  std::string quoted = "'";
  quoted.append(token.substr(0, kMaxQuotedChars));
  if (token.size() > kMaxQuotedChars) quoted.append("...");
  quoted.push_back('\'');
  return quoted;
}

enum class LabelStatus { kOk, kNotNumber, kNotFinite, kNotInteger, kOutOfRange };

// The numeric value of a label token: a decimal number (optional leading '+') with an integer value that
// fits in int32. -0 is normalised to 0 so that "-0" and "0" are one class.
LabelStatus ParseLabelValue(std::string_view token, double* value) {
  const char* begin = token.data();
  const char* end = begin + token.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin != end && (*begin == '+' || *begin == '-')) return LabelStatus::kNotNumber;
  }
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ptr != end || begin == end) return LabelStatus::kNotNumber;
  if (ec == std::errc::result_out_of_range) return LabelStatus::kOutOfRange;
  if (ec != std::errc()) return LabelStatus::kNotNumber;
  if (!std::isfinite(v)) return LabelStatus::kNotFinite;
  if (v != std::trunc(v)) return LabelStatus::kNotInteger;
  if (std::fabs(v) > static_cast<double>(kMaxIndex)) return LabelStatus::kOutOfRange;
  *value = v == 0.0 ? 0.0 : v;
  return LabelStatus::kOk;
}

std::string LabelStatusMessage(LabelStatus status, std::string_view token) {
  switch (status) {
    case LabelStatus::kNotNumber:
      return "expected a numeric class label, got " + Quote(token);
    case LabelStatus::kNotFinite:
      return "expected a finite class label, got " + Quote(token);
    case LabelStatus::kNotInteger:
      return "expected an integer-valued class label, got " + Quote(token) +
             " (regression targets are not supported)";
    case LabelStatus::kOutOfRange:
      return "class label " + Quote(token) + " is out of range (|label| < 2^31)";
    case LabelStatus::kOk:
      break;
  }
  return {};
}

// One pass over the text. State is the cursor, the current line's number and start (for columns), the
// CSR arrays being built and the label table.
class LibsvmParser {
 public:
  LibsvmParser(std::string_view text, const std::string& source, const LibsvmOptions& options)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        line_start_(text.data()),
        source_(source),
        declared_features_(options.num_features),
        rows_held_(options.rows_held),
        labels_only_(options.labels_only) {
    if (options.num_features < 0 || options.num_features > kMaxIndex) {
      throw ConfigError("num_features", "expected 0 (infer) or a feature count in 1..2147483647, got " +
                                            std::to_string(options.num_features));
    }
    max_allowed_index_ = declared_features_ > 0 ? declared_features_ : kMaxIndex;
    fixed_classes_ = !options.class_names.empty();
    for (const std::string& name : options.class_names) {
      double value = 0.0;
      const LabelStatus status = ParseLabelValue(name, &value);
      if (status != LabelStatus::kOk) throw ConfigError("class_names", LabelStatusMessage(status, name));
      if (class_slot_.contains(value)) throw ConfigError("class_names", "duplicate class " + Quote(name));
      AddClass(value, name);
    }
    // An entry takes at least 4 bytes ("1:1 ") and typically 5 (a9a) to 12 (ijcnn1). One entry per 8
    // bytes avoids most regrowth without reserving 2× the text for short-entry files; beyond it the
    // vectors grow geometrically.
    size_t estimate = text.size() / 8;
    if (labels_only_) {
      estimate = 0;
    } else if (!rows_held_.empty()) {  // scale the reservation by the share of rows held
      const auto held = static_cast<size_t>(std::count(rows_held_.begin(), rows_held_.end(), true));
      estimate = estimate / rows_held_.size() * held + held;
    }
    indices_.reserve(estimate);
    values_.reserve(estimate);
    row_ptr_.push_back(0);
  }

  Dataset Parse() {
    while (p_ < end_) {
      SkipBlanks();
      if (p_ == end_) break;
      const char c = *p_;
      if (c == '\n') {
        NextLine();
      } else if (c == '#') {
        SkipComment();
      } else if (c == '\r') {
        ExpectLineEndAfterCr();
      } else {
        ParseExample();
      }
    }
    if (row_slots_.empty()) {
      Fail(p_, begin_ == end_ ? "expected at least one example, got an empty file"
                              : "expected at least one example, found only comments and blank lines");
    }
    return Build();
  }

 private:
  [[noreturn]] void Fail(const char* at, const std::string& message) const {
    throw ParseError(source_, line_, static_cast<int64_t>(at - line_start_) + 1, message);
  }

  void SkipBlanks() {
    while (p_ < end_ && IsBlank(*p_)) ++p_;
  }
  void NextLine() {  // p_ is at '\n'
    ++p_;
    ++line_;
    line_start_ = p_;
  }
  void SkipComment() {  // leaves p_ at the '\n' (or the end)
    const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
    p_ = nl ? static_cast<const char*>(nl) : end_;
  }
  void ExpectLineEndAfterCr() {  // p_ is at '\r'; leaves p_ at the '\n' (or the end)
    if (p_ + 1 < end_ && p_[1] != '\n') Fail(p_, "expected a line end after carriage return");
    ++p_;
  }
  const char* TokenEnd(const char* from) const {
    while (from < end_ && !IsTokenEnd(*from)) ++from;
    return from;
  }

  void ParseExample() {
    const char* label_begin = p_;
    p_ = TokenEnd(p_);
    row_slots_.push_back(ClassSlot(label_begin, p_));
    const size_t row_begin = indices_.size();
    int64_t previous_index = 0;
    for (;;) {
      SkipBlanks();
      if (p_ == end_ || *p_ == '\n') break;
      if (*p_ == '#') {
        SkipComment();
        break;
      }
      if (*p_ == '\r') {
        ExpectLineEndAfterCr();
        break;
      }
      previous_index = ParseEntry(previous_index);
    }
    const size_t row = row_slots_.size() - 1;
    if (labels_only_ || (!rows_held_.empty() && (row >= rows_held_.size() || !rows_held_[row]))) {
      // Parsed and checked like any row; its entries are dropped (a row beyond the mask fails in Build).
      indices_.resize(row_begin);
      values_.resize(row_begin);
    }
    if (indices_.size() > static_cast<size_t>(kMaxIndex)) {
      throw InputError(source_, "more than 2^31-1 stored entries: too large for int32 CSR storage");
    }
    row_ptr_.push_back(static_cast<int32_t>(indices_.size()));
  }

  // Parses `index:value` at p_; returns the index.
  int64_t ParseEntry(int64_t previous_index) {
    const char* index_begin = p_;
    int64_t index = 0;
    const auto [colon, index_ec] = std::from_chars(p_, end_, index);
    if (index_ec == std::errc::invalid_argument) {
      Fail(index_begin, "expected a feature index (an integer >= 1) followed by ':', got " +
                            Quote(std::string_view(index_begin, TokenEnd(index_begin) - index_begin)));
    }
    // Messages are built only on failure: the happy path allocates nothing.
    const std::string_view index_text(index_begin, colon - index_begin);
    auto text = [&] { return std::string(index_text); };
    if (index_ec == std::errc::result_out_of_range) {  // beyond int64: classify by sign
      index = *index_begin == '-' ? 0 : std::numeric_limits<int64_t>::max();
    }
    if (index < 1) Fail(index_begin, "expected a feature index >= 1 (indices are 1-based), got " + text());
    if (index > max_allowed_index_) {
      Fail(index_begin, declared_features_ > 0
                            ? "feature index " + text() + " exceeds the declared feature count " +
                                  std::to_string(declared_features_)
                            : "feature index " + text() + " is too large (at most 2147483647)");
    }
    if (index == previous_index) Fail(index_begin, "duplicate feature index " + text() + " in this line");
    if (index < previous_index) {
      Fail(index_begin, "feature index " + text() + " follows index " + std::to_string(previous_index) +
                            ": indices must be strictly increasing");
    }
    if (colon == end_ || *colon != ':') Fail(colon, "expected ':' after feature index " + text());

    const char* value_begin = colon + 1;
    const char* value_end = TokenEnd(value_begin);
    if (value_begin == value_end) Fail(value_begin, "expected a value after '" + text() + ":'");
    indices_.push_back(static_cast<int32_t>(index - 1));
    values_.push_back(ParseValue(value_begin, value_end, text));
    max_index_ = std::max(max_index_, index);
    p_ = value_end;
    return index;
  }

  // The value token [begin, end), non-empty. `index_text` renders the feature index for messages.
  template <typename IndexText>
  float ParseValue(const char* begin, const char* end, const IndexText& index_text) const {
    // Fast path: binary-feature files (a9a, w8a) write nearly every value as "1". A digits-only token of
    // at most 7 digits is an integer below 2^24, exactly representable in float, so converting it
    // directly gives the same result as std::from_chars at a fraction of the cost.
    if (end - begin <= 7) {
      uint32_t digits = 0;
      const char* q = begin;
      while (q < end && static_cast<unsigned>(*q - '0') < 10)
        digits = digits * 10 + static_cast<uint32_t>(*q++ - '0');
      if (q == end) return static_cast<float>(digits);
    }
    const char* number = begin;
    if (*number == '+') ++number;  // std::from_chars does not take a leading '+'
    float value = 0.0f;
    const auto [parsed_end, ec] = std::from_chars(number, end, value);
    const std::string_view value_text(begin, end - begin);
    if (parsed_end != end || ec == std::errc::invalid_argument || number == end ||
        (number != begin && (*number == '-' || *number == '+'))) {
      Fail(begin, "expected a numeric value after '" + index_text() + ":', got " + Quote(value_text));
    }
    if (ec == std::errc::result_out_of_range) {
      Fail(begin, "value " + Quote(value_text) + " is out of single-precision float range");
    }
    if (!std::isfinite(value)) Fail(begin, "expected a finite value, got " + Quote(value_text));
    return value;
  }

  int32_t ClassSlot(const char* begin, const char* end) {
    const std::string_view token(begin, end - begin);
    double value = 0.0;
    const LabelStatus status = ParseLabelValue(token, &value);
    if (status != LabelStatus::kOk) Fail(begin, LabelStatusMessage(status, token));
    if (value == last_value_ && last_slot_ >= 0) return last_slot_;
    int32_t slot;
    if (const auto it = class_slot_.find(value); it != class_slot_.end()) {
      slot = it->second;
    } else if (fixed_classes_) {
      std::string known;
      for (const std::string& name : class_names_) known += (known.empty() ? "" : ", ") + name;
      Fail(begin, "label " + Quote(token) + " is not one of the reference classes {" + known + "}");
    } else {
      slot = AddClass(value, token);
    }
    last_value_ = value;
    last_slot_ = slot;
    return slot;
  }

  int32_t AddClass(double value, std::string_view name) {
    const auto slot = static_cast<int32_t>(class_values_.size());
    class_slot_.emplace(value, slot);
    class_values_.push_back(value);
    class_names_.emplace_back(name);
    return slot;
  }

  Dataset Build() {
    Dataset out;
    out.source = source_;
    out.format = DataFormat::kLibsvm;
    out.is_sparse = true;
    // Classes in increasing numeric order, unless the caller fixed the mapping.
    std::vector<int32_t> rank(class_values_.size());
    std::iota(rank.begin(), rank.end(), 0);
    if (!fixed_classes_) {
      std::vector<int32_t> order(class_values_.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(),
                [&](int32_t a, int32_t b) { return class_values_[a] < class_values_[b]; });
      for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = static_cast<int32_t>(r);
    }
    out.class_names.resize(class_names_.size());
    for (size_t s = 0; s < class_names_.size(); ++s) out.class_names[rank[s]] = class_names_[s];
    out.labels.resize(row_slots_.size());
    for (size_t r = 0; r < row_slots_.size(); ++r) out.labels[r] = rank[row_slots_[r]];

    const int64_t rows = static_cast<int64_t>(row_slots_.size());
    if (labels_only_) {
      out.held.assign(row_slots_.size(), false);
    } else if (!rows_held_.empty()) {
      if (rows_held_.size() != row_slots_.size()) {
        throw ConfigError("rows_held", "names " + std::to_string(rows_held_.size()) + " rows, the file has " +
                                           std::to_string(rows) + " examples");
      }
      out.held = rows_held_;
    }
    const int64_t cols = declared_features_ > 0 ? declared_features_ : max_index_;
    out.sparse.resize(rows, cols);
    out.sparse.resizeNonZeros(static_cast<Eigen::Index>(indices_.size()));
    std::copy(row_ptr_.begin(), row_ptr_.end(), out.sparse.outerIndexPtr());
    std::copy(indices_.begin(), indices_.end(), out.sparse.innerIndexPtr());
    std::copy(values_.begin(), values_.end(), out.sparse.valuePtr());
    ASYNCDP_CHECK(out.sparse.isCompressed());
    MarkBinaryValues(out);
    return out;
  }

  const char* const begin_;
  const char* p_;
  const char* const end_;
  const char* line_start_;
  int64_t line_ = 1;
  const std::string& source_;
  const int64_t declared_features_;
  const std::vector<bool>& rows_held_;
  const bool labels_only_;
  int64_t max_allowed_index_ = kMaxIndex;
  int64_t max_index_ = 0;

  std::vector<int32_t> row_ptr_;
  std::vector<int32_t> indices_;  // 0-based columns
  std::vector<float> values_;
  std::vector<int32_t> row_slots_;  // class slot per row (discovery order until Build)

  bool fixed_classes_ = false;
  std::unordered_map<double, int32_t> class_slot_;
  std::vector<double> class_values_;
  std::vector<std::string> class_names_;
  double last_value_ = 0.0;  // one-entry cache: consecutive rows often share a label
  int32_t last_slot_ = -1;
};

}  // namespace

Dataset ParseLibsvm(std::string_view text, const std::string& source, const LibsvmOptions& options) {
  // A UTF-8 byte-order mark (written by some editors) is not part of the first label; columns count from
  // the character after it, as editors show them.
  return LibsvmParser(StripUtf8Bom(text), source, options).Parse();
}

Dataset ReadLibsvm(const std::string& path, const LibsvmOptions& options) {
  const std::string text = ReadFileContents(path);
  return ParseLibsvm(text, path, options);
}

LibsvmOptions LibsvmOptionsLike(const Dataset& reference) {
  ASYNCDP_CHECK(reference.is_sparse);
  LibsvmOptions options;
  options.num_features = reference.features();
  options.class_names = reference.class_names;
  return options;
}

Dataset ReadLibsvmLike(const std::string& path, const Dataset& reference) {
  return ReadLibsvm(path, LibsvmOptionsLike(reference));
}

}  // namespace asyncdp::data
