// hookforge/hooks/detail/tensorboard_events.hpp — TensorBoard event files, written by hand:
// the few protobuf messages TensorBoardLogger needs, and the file's record framing.
//
// A file is a sequence of records, each
//   uint64 length | uint32 masked CRC-32C of the length | data | uint32 masked CRC-32C of data
// (little-endian; TFRecord's format), whose data is one serialised tensorflow.Event:
//   Event        wall_time 1 (double), step 2 (int64), file_version 3 (string),
//                summary 5 (Summary), session_log 7 (SessionLog)
//   Summary      value 1 (repeated Value)
//   Value        tag 1, simple_value 2 (float), image 4 (Image), tensor 8 (TensorProto),
//                metadata 9 (SummaryMetadata)
//   Image        height 1, width 2, colorspace 3, encoded_image_string 4 (PNG)
//   TensorProto  dtype 1 (DT_STRING = 7), tensor_shape 2, string_val 8
//   SummaryMetadata  plugin_data 1 (PluginData: plugin_name 1)
//   SessionLog   status 1 (START = 1)
// Six messages and four wire types: smaller than generating them with protoc, and nothing
// to link. The tests read the files with TensorBoard's own reader (tests/run/tensorboard_files.py).
//
// A record is appended with one write(2). A process killed in the middle of one leaves a
// record cut short at the file's end; TensorBoard's reader stops at it (a truncated record)
// and reads the next file of the folder, which the resumed run writes.
#pragma once

#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace hookforge::detail::tensorboard {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord checks it.
inline std::uint32_t crc32c(std::string_view data) {
  static constexpr auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) crc = table[(crc ^ byte) & 0xFFu] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

/// TFRecord stores CRCs masked, so that a CRC of data holding CRCs stays well distributed.
inline std::uint32_t masked_crc32c(std::string_view data) {
  const std::uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

/// A protobuf message being serialised: fields appended in order.
class message {
 public:
  message& varint(int field, std::uint64_t value) {
    key(field, 0);
    put_varint(value);
    return *this;
  }
  message& float64(int field, double value) {
    key(field, 1);
    put_little_endian(std::bit_cast<std::uint64_t>(value), 8);
    return *this;
  }
  message& float32(int field, float value) {
    key(field, 5);
    put_little_endian(std::bit_cast<std::uint32_t>(value), 4);
    return *this;
  }
  message& bytes(int field, std::string_view value) {
    key(field, 2);
    put_varint(value.size());
    bytes_.append(value);
    return *this;
  }
  message& nested(int field, const message& inner) { return bytes(field, inner.bytes_); }

  const std::string& serialized() const { return bytes_; }

 private:
  void key(int field, int wire_type) {
    put_varint((static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
  }
  void put_varint(std::uint64_t value) {
    while (value >= 0x80) {
      bytes_.push_back(static_cast<char>((value & 0x7F) | 0x80));
      value >>= 7;
    }
    bytes_.push_back(static_cast<char>(value));
  }
  void put_little_endian(std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }

  std::string bytes_;
};

/// An Event with its time and step; the caller adds one payload field.
inline message event(double wall_time, std::int64_t step) {
  message e;
  e.float64(1, wall_time);
  if (step != 0) e.varint(2, static_cast<std::uint64_t>(step));
  return e;
}

/// The first event of every file: readers take "brain.Event:2" to mean that a SessionLog
/// START discards the earlier files' events from its step on (how a resumed run replaces
/// what the crashed one wrote after its checkpoint).
inline std::string file_version_event(double wall_time) {
  return event(wall_time, 0).bytes(3, "brain.Event:2").serialized();
}

/// SessionLog START at `step`: the reader drops every event of earlier files at steps >= step.
inline std::string session_start_event(double wall_time, std::int64_t step) {
  return event(wall_time, step).nested(7, message().varint(1, 1)).serialized();
}

inline std::string scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                float value) {
  message v;
  v.bytes(1, tag).float32(2, value);
  return event(wall_time, step).nested(5, message().nested(1, v)).serialized();
}

/// An image: `png` holds the encoded file, `channels` 1 (gray) or 3 (RGB).
inline std::string image_event(double wall_time, std::int64_t step, std::string_view tag,
                               std::int64_t height, std::int64_t width, std::int64_t channels,
                               std::string_view png) {
  message image;
  image.varint(1, static_cast<std::uint64_t>(height))
      .varint(2, static_cast<std::uint64_t>(width))
      .varint(3, static_cast<std::uint64_t>(channels))
      .bytes(4, png);
  message v;
  v.bytes(1, tag).nested(4, image);
  return event(wall_time, step).nested(5, message().nested(1, v)).serialized();
}

/// A text summary (TensorBoard's Text tab renders it as Markdown).
inline std::string text_event(double wall_time, std::int64_t step, std::string_view tag,
                              std::string_view text) {
  message tensor;
  tensor.varint(1, 7).nested(2, message()).bytes(8, text);  // DT_STRING, a scalar
  message metadata;
  metadata.nested(1, message().bytes(1, "text"));
  message v;
  v.bytes(1, tag).nested(8, tensor).nested(9, metadata);
  return event(wall_time, step).nested(5, message().nested(1, v)).serialized();
}

/// `data` framed as one TFRecord.
inline std::string record(std::string_view data) {
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[static_cast<std::size_t>(i)] = static_cast<char>((data.size() >> (8 * i)) & 0xFF);
  auto crc_bytes = [](std::uint32_t crc) {
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i)
      out[static_cast<std::size_t>(i)] = static_cast<char>((crc >> (8 * i)) & 0xFF);
    return out;
  };
  std::string out = length + crc_bytes(masked_crc32c(length));
  out.append(data);
  out += crc_bytes(masked_crc32c(data));
  return out;
}

/// An event file being appended to; closed on destruction.
class event_file {
 public:
  /// A new file in `dir`, named events.out.tfevents.<seconds>.<host>.<pid>: readers load a
  /// folder's files in name order, so its seconds are made later than any file's there.
  event_file(const std::filesystem::path& dir, double wall_time) {
    std::filesystem::create_directories(dir);
    auto seconds = static_cast<std::int64_t>(wall_time);
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      constexpr std::string_view prefix = "events.out.tfevents.";
      if (name.rfind(prefix, 0) != 0) continue;
      std::int64_t earlier = 0;
      for (std::size_t i = prefix.size(); i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i)
        earlier = earlier * 10 + (name[i] - '0');
      if (earlier >= seconds) seconds = earlier + 1;
    }
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    path_ = dir / ("events.out.tfevents." + std::to_string(seconds) + "." + host + "." +
                   std::to_string(getpid()));
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot be created");
    append(file_version_event(wall_time));
  }
  event_file(const event_file&) = delete;
  event_file& operator=(const event_file&) = delete;
  ~event_file() {
    if (fd_ >= 0) ::close(fd_);
  }

  /// Append one event as a record, with one write(2) (checked: a full disk throws).
  void append(std::string_view event) {
    const std::string bytes = record(event);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot be written");
      done += static_cast<std::size_t>(n);
    }
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::filesystem::filesystem_error(std::string("TensorBoard event file ") + what, path_,
                                            std::error_code(errno, std::generic_category()));
  }

  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace hookforge::detail::tensorboard
