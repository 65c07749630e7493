// hookforge/hooks/detail/metrics_table.hpp — the CSV and JSONL tables LossLogger writes
// (metrics.csv / metrics.jsonl, steps.*) and MetricsPlot reads: rows of named cells with an
// "epoch" column, a header widened by rewriting the file atomically, rows of epochs after a
// resume point dropped, a row cut short by a crash left out. RFC 4180 quoting; JSONL rows
// hold the cells they have, non-finite values as null.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "hookforge/torch/io/atomic_file.hpp"

namespace hookforge::detail::metrics_table {

/// One value of a row.
struct cell {
  std::string name;
  double value = 0;
  bool integer = false;
  bool in_csv = true;  ///< false: metrics.jsonl only (figures too many for a CSV column each)
};
using row = std::vector<cell>;

inline std::string csv_value(const cell& c) {
  if (c.integer) return fmt::format("{}", static_cast<std::int64_t>(c.value));
  return fmt::format("{}", c.value);  // shortest round trip; nan, inf, -inf
}

inline std::string json_value(const cell& c) {
  if (c.integer) return fmt::format("{}", static_cast<std::int64_t>(c.value));
  return std::isfinite(c.value) ? fmt::format("{}", c.value) : std::string("null");
}

inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

inline std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

inline std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

/// Complete records of a CSV text (RFC 4180 quoting); a last record without its line
/// end (a write cut short) is left out.
inline std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  return records;
}

inline std::optional<std::int64_t> parse_int(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

/// The "epoch" of a JSONL row this hook wrote, if it has one.
inline std::optional<std::int64_t> json_counter(std::string_view line, std::string_view column) {
  const std::string key = "\"" + std::string(column) + "\":";
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return parse_int(line.substr(at + key.size()));
}

/// Where a column goes in the CSV: counters, training scores, validation scores,
/// learning rates, time.
inline int column_rank(std::string_view name) {
  if (name == "epoch") return 0;
  if (name == "batch") return 1;
  if (name == "step") return 2;
  if (name == "loss" || name.starts_with("train_")) return 3;
  if (name.starts_with("val_")) return 4;
  if (name == "lr" || name.starts_with("lr_")) return 5;
  if (name == "epoch_seconds") return 6;
  return 7;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Append `text` to `path`, never through a symlink planted there (O_NOFOLLOW): a log stays
/// inside the directory it is written to. (Whole rewrites are atomic renames, which replace
/// a symlink rather than follow it.)
inline void append_text(const std::filesystem::path& path, std::string_view text) {
  auto fail = [&](int error) {
    throw std::runtime_error(fmt::format(
        "LossLogger: cannot write '{}': {}", path.string(),
        error == ELOOP
            ? std::string("it is a symbolic link, which hookforge does not write through")
            : std::string(std::strerror(error))));
  };
  int fd;
  do fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) fail(errno);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail(error);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail(errno);
}

/// A CSV file and a JSONL file of rows with an "epoch" column (`<stem>.csv`, `<stem>.jsonl`).
class table {
 public:
  explicit table(std::string stem) : stem_(std::move(stem)) {}

  /// Drop the rows whose counter `column` ("epoch", "step") is above `completed`, and a row
  /// cut short.
  void trim(const std::filesystem::path& dir, std::string_view column, std::int64_t completed) {
    const auto csv = csv_path(dir), jsonl = jsonl_path(dir);
    if (std::filesystem::exists(csv)) {
      const std::string text = read_text(csv);
      auto records = parse_csv(text);
      header_ = records.empty() ? std::vector<std::string>{} : records.front();
      const auto epoch_at = std::find(header_.begin(), header_.end(), column) - header_.begin();
      std::string rows;
      for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        auto epoch =
            static_cast<std::size_t>(epoch_at) < r.size() ? parse_int(r[epoch_at]) : std::nullopt;
        if (!epoch || *epoch <= completed) rows += csv_line(r);
      }
      if (rows.empty()) header_.clear();  // a new table: its header comes from its first row
      const std::string kept = rows.empty() ? std::string() : csv_line(header_) + rows;
      if (kept != text) write_file_atomically(csv, kept);
    }
    if (std::filesystem::exists(jsonl)) {
      const std::string text = read_text(jsonl);
      std::string kept;
      for (std::size_t start = 0; start < text.size();) {
        const auto end = text.find('\n', start);
        if (end == std::string::npos) break;  // cut short
        const auto line = std::string_view(text).substr(start, end + 1 - start);
        auto epoch = json_counter(line, column);
        if (!epoch || *epoch <= completed) kept += line;
        start = end + 1;
      }
      if (kept != text) write_file_atomically(jsonl, kept);
    }
    loaded_ = true;
  }

  void append(const std::filesystem::path& dir, const row& all) {
    const auto csv = csv_path(dir);
    row r;
    for (const auto& c : all)
      if (c.in_csv) r.push_back(c);
    if (!loaded_) trim(dir, "epoch", std::numeric_limits<std::int64_t>::max());
    std::vector<std::string> header = header_;
    for (const auto& c : r)
      if (std::find(header.begin(), header.end(), c.name) == header.end()) header.push_back(c.name);
    std::stable_sort(header.begin(), header.end(), [](const std::string& a, const std::string& b) {
      return column_rank(a) < column_rank(b);
    });
    if (header_.empty()) {
      header_ = header;
      write_file_atomically(csv, csv_line(header_) + csv_line(cells(header_, r)));
    } else if (header != header_) {
      std::string text = csv_line(header);
      auto records = parse_csv(read_text(csv));
      for (std::size_t i = 1; i < records.size(); ++i) {
        std::vector<std::string> widened(header.size());
        for (std::size_t j = 0; j < header_.size() && j < records[i].size(); ++j)
          widened[static_cast<std::size_t>(std::find(header.begin(), header.end(), header_[j]) -
                                           header.begin())] = records[i][j];
        text += csv_line(widened);
      }
      header_ = header;
      write_file_atomically(csv, text + csv_line(cells(header_, r)));
    } else {
      append_text(csv, csv_line(cells(header_, r)));
    }

    std::string json = "{";
    for (std::size_t i = 0; i < all.size(); ++i)
      json += fmt::format("{}{}: {}", i ? ", " : "", json_string(all[i].name), json_value(all[i]));
    append_text(jsonl_path(dir), json + "}\n");
  }

  const std::vector<std::string>& header() const { return header_; }

 private:
  static std::vector<std::string> cells(const std::vector<std::string>& header, const row& r) {
    std::vector<std::string> out(header.size());
    for (const auto& c : r)
      out[static_cast<std::size_t>(std::find(header.begin(), header.end(), c.name) -
                                   header.begin())] = csv_value(c);
    return out;
  }
  std::filesystem::path csv_path(const std::filesystem::path& dir) const {
    return dir / (stem_ + ".csv");
  }
  std::filesystem::path jsonl_path(const std::filesystem::path& dir) const {
    return dir / (stem_ + ".jsonl");
  }

  std::string stem_;
  std::vector<std::string> header_;
  bool loaded_ = false;
};

}  // namespace hookforge::detail::metrics_table
