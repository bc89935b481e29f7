//===- ByteIO.h - Little-endian, self-checking byte forms -------*- C++ -*-===//
//
// This file declares the helpers behind kite's byte forms (plans, cache
// entries, bundles): a little-endian writer, a bounds-checked reader whose
// every failure is a kite::Error naming the field and the offset, and the
// frame around a payload:
//
//   magic (8 bytes)  u32 format version  u64 payload size  payload  u64 FNV-1a(payload)
//
// unframe checks the magic, the version, the size and the checksum before
// anything parses the payload, so a truncated, corrupt, foreign or
// other-version buffer is refused with a message that says which; and
// printable() escapes what such a buffer says before it reaches a terminal.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_BYTEIO_H
#define KITE_RUNTIME_BYTEIO_H

#include <kite/kite.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kite::runtime {

/// FNV-1a, 64 bits: the checksum of every byte form and the hash of cache
/// keys (stable across processes, platforms and kite versions).
inline uint64_t fnv1a(const void *data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  auto *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}
inline uint64_t fnv1a(std::string_view s) { return fnv1a(s.data(), s.size()); }

/// Appends little-endian fields; strings and byte arrays are length-prefixed.
class ByteWriter {
public:
  std::vector<uint8_t> out;
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(uint64_t(v), 8); }
  void f64(double v) { le(std::bit_cast<uint64_t>(v), 8); }
  void bytes(const void *p, size_t n) {
    u64(n);
    auto *b = static_cast<const uint8_t *>(p);
    out.insert(out.end(), b, b + n);
  }
  void bytes(std::span<const uint8_t> b) { bytes(b.data(), b.size()); }
  void str(std::string_view s) { bytes(s.data(), s.size()); }
  void i64s(const std::vector<int64_t> &v) {
    u64(v.size());
    for (int64_t x : v)
      i64(x);
  }

private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out.push_back(uint8_t(v >> (8 * i)));
  }
};

/// Reads what ByteWriter wrote. Every read is bounds-checked; a failure
/// throws "<what>: corrupt buffer: <why> (at byte N)", N counted from the
/// start of the whole buffer (`base` is where `data` starts in it).
class ByteReader {
public:
  ByteReader(std::span<const uint8_t> data, size_t base, std::string_view what)
      : data_(data), base_(base), what_(what) {}
  uint8_t u8(const char *field) { return uint8_t(le(1, field)); }
  uint32_t u32(const char *field) { return uint32_t(le(4, field)); }
  uint64_t u64(const char *field) { return le(8, field); }
  int64_t i64(const char *field) { return int64_t(le(8, field)); }
  double f64(const char *field) { return std::bit_cast<double>(le(8, field)); }
  /// A count of items of at least `minItemBytes` each, checked against what
  /// is left so a corrupt count cannot make a huge allocation.
  size_t count(const char *field, size_t minItemBytes) {
    uint64_t n = u64(field);
    if (n > remaining() / std::max<size_t>(minItemBytes, 1))
      fail(fmt::format("{} claims {} items, more than the {} bytes left hold", field, n,
                       remaining()));
    return size_t(n);
  }
  std::span<const uint8_t> view(const char *field) {
    size_t n = count(field, 1);
    std::span<const uint8_t> v = data_.subspan(pos_, n);
    pos_ += n;
    return v;
  }
  std::vector<uint8_t> bytes(const char *field) {
    std::span<const uint8_t> v = view(field);
    return {v.begin(), v.end()};
  }
  std::string str(const char *field) {
    std::span<const uint8_t> v = view(field);
    return {reinterpret_cast<const char *>(v.data()), v.size()};
  }
  std::vector<int64_t> i64s(const char *field) {
    size_t n = count(field, 8);
    std::vector<int64_t> v(n);
    for (auto &x : v)
      x = i64(field);
    return v;
  }
  template <class E> E enumeration(const char *field, uint8_t last) {
    uint8_t v = u8(field);
    if (v > last)
      fail(fmt::format("{} has value {}, past the last valid {}", field, v, last));
    return E(v);
  }
  size_t remaining() const { return data_.size() - pos_; }
  [[noreturn]] void fail(const std::string &why) const {
    throw Error(fmt::format("{}: corrupt buffer: {} (at byte {})", what_, why, base_ + pos_));
  }

private:
  uint64_t le(int n, const char *field) {
    if (remaining() < size_t(n))
      fail(fmt::format("{} needs {} bytes, {} left", field, n, remaining()));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= uint64_t(data_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  size_t base_;
  std::string_view what_;
};

/// How a byte form is framed: its 8-byte magic, its format version, and the
/// words for messages.
struct FrameKind {
  std::string_view magic;   // exactly 8 characters ("KITEPLAN")
  uint32_t version;         // what this kite writes and reads
  std::string_view what;     // the message prefix ("kite plan")
  std::string_view item;     // what the payload holds, for messages ("plan")
  std::string_view outdated; // what to do about another version ("recompile the kernel")
};

inline constexpr size_t kFrameHeaderBytes = 8 + 4 + 8;
inline constexpr size_t kFrameTrailerBytes = 8;

/// Frames a payload.
inline std::vector<uint8_t> frame(const FrameKind &kind, std::span<const uint8_t> payload) {
  ByteWriter out;
  out.out.reserve(kFrameHeaderBytes + payload.size() + kFrameTrailerBytes);
  out.out.insert(out.out.end(), kind.magic.begin(), kind.magic.end());
  out.u32(kind.version);
  out.u64(payload.size());
  out.out.insert(out.out.end(), payload.begin(), payload.end());
  out.u64(fnv1a(payload.data(), payload.size()));
  return std::move(out.out);
}

/// The format version of a framed buffer with this magic, or nullopt when
/// it is too short or has another magic.
inline std::optional<uint32_t> frameVersion(const FrameKind &kind,
                                            std::span<const uint8_t> bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kind.magic.data(), 8) != 0)
    return std::nullopt;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(bytes[8 + i]) << (8 * i);
  return v;
}

/// Throws unframe's "not a <what>" error unless `head` starts with the
/// magic. `head` may be just the first bytes of a file of `totalBytes`
/// bytes: readers check the magic before reading anything else.
inline void checkMagic(const FrameKind &kind, std::span<const uint8_t> head, uint64_t totalBytes) {
  if (head.size() < 8 || std::memcmp(head.data(), kind.magic.data(), 8) != 0)
    throw Error(fmt::format("{0}: not a {0} ({1} bytes without the '{2}' magic)", kind.what,
                            totalBytes, kind.magic));
}

/// The payload of a framed buffer, after checking the magic, the version,
/// the size and the checksum; throws a kite::Error that says which failed:
///   "<what>: not a <what> (N bytes without the 'MAGIC' magic)"
///   "<what>: truncated: ..."
///   "<what>: format version V, but this kite reads version W; <outdated>"
///   "<what>: corrupt buffer: checksum mismatch"
inline std::span<const uint8_t> unframe(const FrameKind &kind, std::span<const uint8_t> bytes) {
  checkMagic(kind, bytes, bytes.size());
  if (bytes.size() < kFrameHeaderBytes + kFrameTrailerBytes)
    throw Error(fmt::format("{}: truncated: {} bytes, shorter than the {}-byte header and "
                            "checksum",
                            kind.what, bytes.size(), kFrameHeaderBytes + kFrameTrailerBytes));
  ByteReader header(bytes.subspan(8, 12), 8, kind.what);
  uint32_t version = header.u32("format version");
  if (version != kind.version)
    throw Error(fmt::format("{}: format version {}, but this kite reads version {}; {}", kind.what,
                            version, kind.version, kind.outdated));
  uint64_t payloadSize = header.u64("payload size");
  uint64_t available = bytes.size() - kFrameHeaderBytes - kFrameTrailerBytes;
  if (payloadSize > available)
    throw Error(fmt::format("{}: truncated: the payload is {} bytes but only {} are there",
                            kind.what, payloadSize, available));
  if (payloadSize < available)
    throw Error(fmt::format("{}: corrupt buffer: {} byte{} after the end of the {}", kind.what,
                            available - payloadSize, available - payloadSize == 1 ? "" : "s",
                            kind.item));
  std::span<const uint8_t> payload = bytes.subspan(kFrameHeaderBytes, payloadSize);
  ByteReader trailer(bytes.subspan(kFrameHeaderBytes + payloadSize, kFrameTrailerBytes),
                     kFrameHeaderBytes + payloadSize, kind.what);
  if (trailer.u64("checksum") != fnv1a(payload.data(), payload.size()))
    throw Error(fmt::format("{}: corrupt buffer: checksum mismatch", kind.what));
  return payload;
}

/// `text` from a byte form (untrusted: a kernel name, a config, an error
/// quoting them) as it may be printed to a terminal: control characters
/// (C0, DEL and C1) and bytes that are not UTF-8 become `\xNN`, so that a
/// name cannot move the cursor, retitle the window or hide itself; other
/// characters, UTF-8 ones included, are kept.
inline std::string printable(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  for (size_t i = 0; i < text.size();) {
    uint8_t c = byte(i);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        s += fmt::format("\\x{:02x}", c);
      else
        s += char(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then its
    // continuation bytes; overlong forms, surrogates, code points past
    // U+10FFFF and the C1 controls (U+0080..U+009F) are escaped byte by byte.
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool valid = n != 0 && i + n <= text.size();
    for (size_t k = 1; valid && k < n; ++k)
      valid = (byte(i + k) & 0xc0) == 0x80;
    if (valid) {
      uint8_t c1 = byte(i + 1);
      valid = !(c == 0xc2 && c1 < 0xa0) && !(c == 0xe0 && c1 < 0xa0) &&
              !(c == 0xed && c1 >= 0xa0) && !(c == 0xf0 && c1 < 0x90) &&
              !(c == 0xf4 && c1 >= 0x90);
    }
    if (!valid) {
      s += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    s.append(text.substr(i, n));
    i += n;
  }
  return s;
}

} // namespace kite::runtime

#endif // KITE_RUNTIME_BYTEIO_H
