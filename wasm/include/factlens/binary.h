// Copyright factlens authors. binary: the byte-level pieces of the compiled list form.
//
// Little-endian fixed-width integers and length-prefixed strings, written into a
// growing buffer and read back with bounds checks: a reader never reads past its
// input, and after the first failure every read fails (check ok() once at the end).
// Checksum64 is 64-bit FNV-1a over 8-byte words: it detects accidental corruption
// (truncated or bit-flipped storage), not tampering; the compiled form is a cache
// the engine itself wrote.
#ifndef FACTLENS_BINARY_H_
#define FACTLENS_BINARY_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace factlens {

// Returns a 64-bit checksum of `bytes`.
uint64_t Checksum64(std::string_view bytes);

// Checksum64 of bytes that come in pieces (the compiled form's sections, never
// all in one buffer), whose total size is known at the start.
class Checksum64Stream {
 public:
  explicit Checksum64Stream(uint64_t total_size);
  void Add(std::string_view bytes);
  // The checksum, once Add has been given `total_size` bytes in all.
  uint64_t Finish() const;

 private:
  static constexpr int kLanes = 4;
  static constexpr size_t kBlock = 8 * kLanes;  // a word for each lane
  // Steps each lane over `blocks` blocks from `p`.
  void Blocks(const char* p, size_t blocks);
  uint64_t h_[kLanes];
  char pending_[kBlock];  // the start of a block that the next piece completes
  size_t pending_size_ = 0;
};

// Hands `v` to put() in 1-5 bytes, 7 bits at a time, low first (LEB128): the
// Var32 of ByteWriter and of writers of their own (match.cc's RecordWriter).
template <typename Put>
void PutVar32(uint32_t v, Put&& put) {
  while (v >= 0x80) {
    put(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  put(static_cast<uint8_t>(v));
}

class ByteWriter {
 public:
  ByteWriter() = default;
  // A writer that keeps no bytes and only counts them (size()), to learn what to
  // Reserve: a large buffer grown by doubling leaves each smaller one behind as a
  // hole too small for the next, and wasm memory keeps the peak (a 100k-rule
  // export grew it by 56 MB for a 19 MB section).
  static ByteWriter Counter() {
    ByteWriter w;
    w.count_only_ = true;
    return w;
  }
  // A writer that hands its bytes to `sink` as it goes, in parts of `part` bytes or
  // more: what it buffers goes out once it reaches `part` bytes, and a run of at
  // least `part` bytes (a large Vec) goes out from where it is, without a copy.
  // Flush() hands out the rest. A large section is then never whole in memory
  // (wasm memory keeps its peak: a 100k-rule export's 19 MB similarity section
  // found no hole to fit in and grew it).
  static ByteWriter Streaming(size_t part, std::function<void(std::string_view)> sink) {
    ByteWriter w;
    w.part_ = part > 0 ? part : 1;
    w.sink_ = std::move(sink);
    return w;
  }
  void Flush() {
    if (!sink_ || out_.empty()) return;
    flushed_ += out_.size();
    sink_(out_);
    out_.clear();  // (keeps its capacity for the next part)
  }
  void Reserve(size_t n) {
    // (A streaming writer holds less than two parts at a time.)
    if (!count_only_) out_.reserve(sink_ ? std::min(n, 2 * part_) : n);
  }
  void U8(uint8_t v) {
    if (count_only_) {
      ++counted_;
    } else {
      out_.push_back(static_cast<char>(v));
      if (sink_ && out_.size() >= part_) Flush();
    }
  }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F64(double v) { Raw(&v, 8); }
  // Writes the bytes of `s` as they are (no length).
  void Append(std::string_view s) { Raw(s.data(), s.size()); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    Append(s);
  }
  void Strs(const std::vector<std::string>& v) {
    U32(static_cast<uint32_t>(v.size()));
    for (const std::string& s : v) Str(s);
  }
  // Writes a vector of trivially copyable values as a count and raw bytes.
  template <typename T>
  void Vec(const std::vector<T>& v) {
    U32(static_cast<uint32_t>(v.size()));
    Raw(v.data(), v.size() * sizeof(T));
  }
  // Writes `v` in 1-5 bytes, 7 bits at a time, low first (LEB128): for the many
  // small numbers of sorted id lists written as gaps.
  void Var32(uint32_t v) {
    PutVar32(v, [this](uint8_t b) { U8(b); });
  }
  // The bytes written so far (those a streaming writer handed out included).
  size_t size() const { return count_only_ ? counted_ : flushed_ + out_.size(); }
  // The bytes written (none for a Counter; those not yet handed out for a
  // streaming writer).
  std::string& bytes() { return out_; }

 private:
  void Raw(const void* p, size_t n) {
    // The format is little-endian; wasm and the machines we build on are too.
    static_assert(sizeof(uint32_t) == 4, "");
    if (count_only_) {
      counted_ += n;
    } else if (sink_ && n >= part_) {
      Flush();
      flushed_ += n;
      sink_(std::string_view(static_cast<const char*>(p), n));
    } else {
      out_.append(static_cast<const char*>(p), n);
      if (sink_ && out_.size() >= part_) Flush();
    }
  }
  std::string out_;
  bool count_only_ = false;
  size_t counted_ = 0;
  // A streaming writer's: its part size, the bytes handed out, where they go.
  size_t part_ = 0, flushed_ = 0;
  std::function<void(std::string_view)> sink_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in), size_(in.size()) {}
  // A reader over `size` bytes that `source` brings in a window at a time (of
  // `window` bytes, or a View's size if larger: a view is one piece):
  // source(offset, n) returns the n bytes at `offset`, valid until its next call.
  // A large compiled section is then never whole in memory: imported from a
  // JavaScript array, each section was copied whole into a fresh buffer, and in a
  // fresh wasm module the first write to a page costs (2.8 ms a MB here) about 50
  // times a later one.
  using Source = std::function<std::string_view(size_t offset, size_t n)>;
  static ByteReader Streaming(size_t size, size_t window, Source source) {
    ByteReader r{std::string_view()};
    r.size_ = size;
    r.window_ = window > 0 ? window : 1;
    r.source_ = std::move(source);
    return r;
  }
  uint8_t U8() {
    uint8_t v = 0;
    Raw(&v, 1);
    return v;
  }
  uint32_t U32() {
    uint32_t v = 0;
    Raw(&v, 4);
    return v;
  }
  uint64_t U64() {
    uint64_t v = 0;
    Raw(&v, 8);
    return v;
  }
  int64_t I64() {
    int64_t v = 0;
    Raw(&v, 8);
    return v;
  }
  double F64() {
    double v = 0;
    Raw(&v, 8);
    return v;
  }
  bool Str(std::string* s) {
    uint32_t n = U32();
    if (!ok_ || n > size_ - pos_) return Fail();
    if (n <= base_ + in_.size() - pos_) {
      s->assign(in_.data() + (pos_ - base_), n);
      pos_ += n;
      return true;
    }
    s->resize(n);
    RawStreaming(s->data(), n);
    return ok_;
  }
  // Str without a copy: *s views the input.
  bool StrView(std::string_view* s) {
    uint32_t n = U32();
    return ok_ && View(n, s);
  }
  bool Strs(std::vector<std::string>* v) {
    uint32_t n = U32();
    // Each string takes at least its 4-byte length: bound the count first.
    if (!ok_ || n > (size_ - pos_) / 4) return Fail();
    v->resize(n);
    for (std::string& s : *v) {
      if (!Str(&s)) return false;
    }
    return true;
  }
  template <typename T>
  bool Vec(std::vector<T>* v) {
    uint32_t n = U32();
    if (!ok_ || n > (size_ - pos_) / sizeof(T)) return Fail();
    v->resize(n);
    Raw(v->data(), n * sizeof(T));
    return ok_;
  }
  // Reads what Var32 wrote; fails on a truncated or over-long (> 32 bits) number.
  uint32_t Var32() {
    // Most are a byte (gaps of sorted ids, counts, string lengths), in the window:
    // one test each, where a read through U8 took three (a 100k restore reads 5M).
    const size_t at = pos_ - base_;
    if (ok_ && at < in_.size() && static_cast<uint8_t>(in_[at]) < 0x80) {
      ++pos_;
      return static_cast<uint8_t>(in_[at]);
    }
    return Var32Bytes();
  }
  // Returns the next `n` bytes as a view and skips them. A streaming reader's view
  // is valid until its next read.
  bool View(size_t n, std::string_view* out) {
    if (!ok_ || n > size_ - pos_) return Fail();
    if (n > base_ + in_.size() - pos_ && !Bring(n)) return Fail();
    *out = in_.substr(pos_ - base_, n);
    pos_ += n;
    return true;
  }
  // Appends the next `n` bytes to *s, a window at a time: s->reserve, then this,
  // writes each byte once, where resize then Bytes wrote each twice (a memset first:
  // 20 MB of rule records at 100k rules, in a function V8 had not yet optimised).
  bool AppendTo(std::string* s, size_t n) {
    if (!ok_ || n > size_ - pos_) return Fail();
    ForEachPiece(n, [s](const char* piece, size_t size) { s->append(piece, size); });
    return ok_;
  }
  // Reads the next `n` bytes into `p`.
  bool Bytes(void* p, size_t n) {
    Raw(p, n);
    return ok_;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == size_; }
  size_t remaining() const { return size_ - pos_; }
  size_t pos() const { return pos_; }
  bool Fail() {
    ok_ = false;
    return false;
  }

 private:
  // Var32 byte by byte (a number of several bytes, or across windows).
  [[gnu::noinline]] uint32_t Var32Bytes() {
    uint32_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      const uint8_t b = U8();
      if (!ok_) return 0;
      if (shift == 28 && b > 0x0F) break;
      v |= static_cast<uint32_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    Fail();
    return 0;
  }
  void Raw(void* p, size_t n) {
    if (!ok_ || n > size_ - pos_) {
      ok_ = false;
      return;
    }
    if (n <= base_ + in_.size() - pos_) {  // in the window (all of a plain reader)
      if (n) std::memcpy(p, in_.data() + (pos_ - base_), n);
      pos_ += n;
      return;
    }
    RawStreaming(static_cast<char*>(p), n);
  }
  // Raw across windows: what is left of this one, then the next ones. (Not
  // inlined: Raw's in-window path stays small enough to inline into every read.)
  [[gnu::noinline]] void RawStreaming(char* p, size_t n) {
    ForEachPiece(n, [&p](const char* piece, size_t size) {
      std::memcpy(p, piece, size);
      p += size;
    });
  }
  // Hands the next `n` bytes (n <= size_ - pos_) to sink(bytes, size) in pieces:
  // what is left of this window, then the next windows.
  template <typename Sink>
  void ForEachPiece(size_t n, const Sink& sink) {
    while (n > 0) {
      size_t here = base_ + in_.size() - pos_;
      if (here == 0) {
        if (!Bring(1)) return;
        here = in_.size();
      }
      const size_t take = n < here ? n : here;
      sink(in_.data() + (pos_ - base_), take);
      n -= take;
      pos_ += take;
    }
  }
  // Makes the window start at pos_ and hold at least `n` bytes (n <= size_ - pos_).
  [[gnu::noinline]] bool Bring(size_t n) {
    if (!source_) return Fail();  // (a plain reader holds all of its input)
    const size_t want = std::min(size_ - pos_, std::max(n, window_));
    in_ = source_(pos_, want);
    base_ = pos_;
    if (in_.size() != want) {
      in_ = {};
      return Fail();
    }
    return true;
  }
  // The window: bytes [base_, base_ + in_.size()) of the input's size_.
  std::string_view in_;
  size_t base_ = 0, size_ = 0;
  size_t pos_ = 0;
  bool ok_ = true;
  size_t window_ = 0;
  Source source_;
};

}  // namespace factlens

#endif  // FACTLENS_BINARY_H_
