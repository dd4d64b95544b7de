#include "trace/binary/binary_reader.h"

#include "fmt/format.h"
#include "trace/text/field_rules.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace {

using binary::Cursor;
using binary::Decode;

namespace {

// The largest record a valid file can hold: a metadata entry of two maximal
// strings, or an event with a maximal tag and shape. Anything that would need
// more is refused by the length checks before its bytes are awaited.
constexpr size_t kMaxRecordBytes = 2 * binary::kMaxStringBytes + 16 * binary::kMaxRank + 256;

// head, ext, then at most six varints (id, bytes, t=, stream=, a tag's
// dictionary reference, device=).
constexpr size_t kCommonRecordMaxBytes = 2 + 6 * binary::Cursor::kMaxVarintBytes;

bool IsBufferKind(uint8_t kind) { return IsBufferEvent(static_cast<EventKind>(kind)); }
bool IsProgramKind(uint8_t kind) { return IsProgramEvent(static_cast<EventKind>(kind)); }
bool HasBytes(uint8_t kind) {
  return kind == static_cast<uint8_t>(EventKind::kAlloc) ||
         kind == static_cast<uint8_t>(EventKind::kProgramLoad);
}

}  // namespace

BinaryTraceReader::BinaryTraceReader(std::unique_ptr<ByteSource> source, std::string name)
    : name_(std::move(name)), window_(std::move(source), kMaxRecordBytes) {
  dictionary_.reserve(binary::kMaxDictTags);
}

absl::StatusOr<std::unique_ptr<BinaryTraceReader>> BinaryTraceReader::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenFileSource(path);
  if (!source.ok()) return source.status();
  return FromSource(std::move(*source), path);
}

absl::StatusOr<std::unique_ptr<BinaryTraceReader>> BinaryTraceReader::FromString(std::string bytes,
                                                                                 std::string name) {
  return FromSource(StringSource(std::move(bytes)), std::move(name));
}

absl::StatusOr<std::unique_ptr<BinaryTraceReader>> BinaryTraceReader::FromSource(
    std::unique_ptr<ByteSource> source, std::string name) {
  std::unique_ptr<BinaryTraceReader> reader(new BinaryTraceReader(std::move(source), std::move(name)));
  if (absl::Status s = reader->ReadHeader(); !s.ok()) return s;
  return reader;
}

std::string BinaryTraceReader::Location() const { return fmt::format("{}: byte {}", name_, event_offset_); }

absl::Status BinaryTraceReader::ErrorAt(uint64_t offset, std::string_view message) const {
  return absl::InvalidArgumentError(fmt::format("{}: byte {}: {}", name_, offset, message));
}

Decode BinaryTraceReader::Malformed(const Cursor& c, std::string message) {
  error_ = std::move(message);
  error_at_ = c.p;
  return Decode::kMalformed;
}

template <typename F>
absl::Status BinaryTraceReader::DecodeRecord(F decode) {
  while (true) {
    Cursor c{window_.data(), window_.data(), window_.data() + window_.size()};
    error_at_ = nullptr;
    const Decode d = decode(c);
    if (d == Decode::kOk) {
      window_.Consume(c.consumed());
      return absl::OkStatus();
    }
    if (d == Decode::kMalformed) {
      // Only the cursor's varint fails without saying why; it stops at its start.
      if (error_at_ == nullptr) Malformed(c, "malformed varint");
      return ErrorAt(window_.offset() + (error_at_ - window_.data()), error_);
    }
    absl::StatusOr<bool> more = window_.Refill();
    if (!more.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", name_, std::string(more.status().message())));
    }
    if (!*more) {
      const uint64_t end = window_.offset() + window_.size();
      return ErrorAt(end, window_.size() == 0 ? "truncated: the file ends without the end-of-trace record"
                                              : "truncated: the file ends inside a record");
    }
  }
}

absl::Status BinaryTraceReader::ReadHeader() {
  if (absl::Status s = window_.Start(); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", name_, std::string(s.message())));
  }
  uint64_t entries = 0;
  if (absl::Status s = DecodeRecord([&](Cursor& c) { return DecodeHeaderStart(c, entries); }); !s.ok()) {
    return s;
  }
  // `entries` comes from the file: nothing is reserved for it, each entry is
  // read (and paid for) one at a time, so a lying count meets the file's end.
  for (uint64_t i = 0; i < entries; ++i) {
    if (absl::Status s = DecodeRecord([&](Cursor& c) { return DecodeMetadataEntry(c); }); !s.ok()) return s;
  }
  event_offset_ = window_.offset();
  return absl::OkStatus();
}

Decode BinaryTraceReader::DecodeString(Cursor& c, std::string_view what, std::string_view& out) {
  uint64_t length = 0;
  HBT_TRY(c.Varint(length));
  if (length > binary::kMaxStringBytes) {
    return Malformed(
        c, fmt::format("{} of {} bytes (at most {} allowed)", what, length, binary::kMaxStringBytes));
  }
  return c.Bytes(length, out);
}

absl::StatusOr<bool> BinaryTraceReader::Next(Event& e) {
  // The common record, kept small enough to inline its validation: the
  // function's frame is what every event pays.
  event_offset_ = window_.offset();
  if (!stopped_ && DecodeCommonRecord(e)) [[likely]] {
    if (absl::Status s = validator_.Check(e); !s.ok()) [[unlikely]] {
      return ValidationError(s);
    }
    return true;
  }
  return NextRecord(e);
}

absl::Status BinaryTraceReader::ValidationError(const absl::Status& s) const {
  return ErrorAt(event_offset_, std::string(s.message()));
}

absl::StatusOr<bool> BinaryTraceReader::NextRecord(Event& e) {
  if (broken_) return *broken_;
  if (finished_) return false;
  if (absl::Status s = DecodeRecord([&](Cursor& c) { return DecodeEvent(c, e); }); !s.ok()) {
    broken_ = s;
    stopped_ = true;
    return s;
  }
  if (finished_) {
    stopped_ = true;
    if (absl::Status s = CheckNothingFollows(); !s.ok()) {
      broken_ = s;
      return s;
    }
    return false;
  }
  if (absl::Status s = validator_.Check(e); !s.ok()) return ValidationError(s);
  return true;
}

[[gnu::always_inline]] inline bool BinaryTraceReader::DecodeCommonRecord(Event& e) {
  if (window_.size() < kCommonRecordMaxBytes) return false;
  const uint8_t head = window_.data()[0];
  const uint8_t kind = head & binary::kKindMask;
  // Marks, the end record and unknown kinds; stream= or tag= where it is an error.
  const bool has_tag = (head & binary::kHasTag) != 0;
  if (kind >= static_cast<uint8_t>(EventKind::kMark) ||
      ((head & binary::kHasStream) != 0 && !IsBufferKind(kind)) || (has_tag && !HasBytes(kind))) {
    return false;
  }
  Cursor c{window_.data(), window_.data() + 1, window_.data() + window_.size()};
  uint8_t ext = 0;
  if ((head & binary::kHasExt) != 0) {
    ext = *c.p++;
    if ((ext & ~binary::kExtDevice) != 0) return false;  // shape=, addr= or unknown bits
  }
  uint64_t id_delta = 0, bytes = 0, time_delta = 0, stream = 0, device = 0;
  if (c.UncheckedVarint(id_delta) != Decode::kOk) return false;
  if (HasBytes(kind) && c.UncheckedMultiByteVarint(bytes) != Decode::kOk) return false;
  if ((head & binary::kHasTime) != 0 && c.UncheckedVarint(time_delta) != Decode::kOk) return false;
  if ((head & binary::kHasStream) != 0 && c.UncheckedVarint(stream) != Decode::kOk) return false;
  // A tag already in the dictionary (nearly every tagged record of a trace
  // with a few tags: a training trace's every alloc); a new tag is added by
  // the full decoder.
  uint64_t tag_ref = 0;
  if (has_tag) {
    if (c.UncheckedVarint(tag_ref) != Decode::kOk || tag_ref - 1 >= dictionary_.size()) return false;  // 0: a new tag
  }
  if ((ext & binary::kExtDevice) != 0 && c.UncheckedVarint(device) != Decode::kOk) return false;

  // The record is whole and valid: apply it as DecodeEvent would.
  const bool is_program = IsProgramKind(kind);
  uint64_t& base = is_program ? state_.program_id : state_.alloc_id;
  e.kind = static_cast<EventKind>(kind);
  e.id = base + binary::UnZigZag(id_delta);
  if (kind == static_cast<uint8_t>(EventKind::kAlloc) || is_program) base = e.id;
  e.bytes = Bytes(bytes);
  if ((head & binary::kHasTime) != 0) {
    state_.time_us += binary::UnZigZag(time_delta);
    e.time_us = state_.time_us;
  } else {
    e.time_us.reset();
  }
  e.stream = StreamId(stream);
  e.device = DeviceId(device);
  e.tag = {};
  if (has_tag) e.tag = dictionary_[tag_ref - 1];
  e.label = {};
  e.attrs = {};
  if (e.shape.has_value()) e.shape.reset();
  e.addr.reset();
  ++events_;
  window_.Consume(c.consumed());
  return true;
}

[[gnu::always_inline]] inline Decode BinaryTraceReader::DecodeEvent(Cursor& c, Event& e) {
  uint8_t head = 0;
  HBT_TRY(c.Byte(head));
  const uint8_t kind = head & binary::kKindMask;
  if (kind == binary::kEndOfTrace && head == binary::kEndOfTrace) return FinishTrace(c);
  if (kind > static_cast<uint8_t>(EventKind::kMark)) {
    --c.p;
    return Malformed(c, fmt::format("unknown record type {:#04x}", head));
  }
  uint8_t ext = 0;
  if ((head & binary::kHasExt) != 0) {
    HBT_TRY(c.Byte(ext));
    if ((ext & ~binary::kExtKnown) != 0)
      return Malformed(c, fmt::format("unknown attribute bits {:#04x}", ext));
  }
  DeltaState s = state_;
  e.kind = static_cast<EventKind>(kind);
  e.bytes = Bytes(0);
  e.tag = {};
  e.label = {};
  HBT_TRY(DecodeId(c, kind, s, e));
  if (HasBytes(kind)) {
    uint64_t bytes = 0;
    HBT_TRY(c.Varint(bytes));
    e.bytes = Bytes(bytes);
  }
  HBT_TRY(DecodeAttributes(c, head, ext, s, e));
  state_ = s;
  ++events_;
  return Decode::kOk;
}

[[gnu::always_inline]] inline Decode BinaryTraceReader::DecodeId(Cursor& c, uint8_t kind, DeltaState& s,
                                                                 Event& e) {
  if (kind == static_cast<uint8_t>(EventKind::kMark)) {
    e.id = 0;
    HBT_TRY(DecodeString(c, "mark label", e.label));
    if (e.label.empty() || HasBlankOrBreak(e.label) || !IsValidUtf8(e.label)) {
      return Malformed(c,
                       "mark label the text format cannot carry (empty, blank, line break, NUL or invalid "
                       "UTF-8)");
    }
    return Decode::kOk;
  }
  uint64_t z = 0;
  HBT_TRY(c.Varint(z));
  uint64_t& base = IsProgramKind(kind) ? s.program_id : s.alloc_id;
  e.id = base + binary::UnZigZag(z);
  if (kind == static_cast<uint8_t>(EventKind::kAlloc) || IsProgramKind(kind)) base = e.id;
  return Decode::kOk;
}

[[gnu::always_inline]] inline Decode BinaryTraceReader::DecodeAttributes(Cursor& c, uint8_t head, uint8_t ext,
                                                                         DeltaState& s, Event& e) {
  const uint8_t kind = head & binary::kKindMask;
  const bool is_alloc = kind == static_cast<uint8_t>(EventKind::kAlloc);
  e.time_us.reset();
  if ((head & binary::kHasTime) != 0) {
    uint64_t z = 0;
    HBT_TRY(c.Varint(z));
    s.time_us += binary::UnZigZag(z);
    e.time_us = s.time_us;
  }
  uint64_t stream = 0;
  if ((head & binary::kHasStream) != 0) {
    if (!IsBufferKind(kind)) return Malformed(c, "stream= on an event other than alloc and free*");
    HBT_TRY(c.Varint(stream));
  }
  e.stream = StreamId(stream);
  bool add_to_dictionary = false;
  if ((head & binary::kHasTag) != 0) {
    if (!HasBytes(kind)) return Malformed(c, "tag= on an event other than alloc and program_load");
    HBT_TRY(DecodeTag(c, e, add_to_dictionary));
  }
  uint64_t device = 0;
  if ((ext & binary::kExtDevice) != 0) HBT_TRY(c.Varint(device));
  e.device = DeviceId(device);
  if ((ext & (binary::kExtShape | binary::kExtAddr)) != 0 && !is_alloc) {
    return Malformed(c, "shape= or addr= on an event other than alloc");
  }
  if ((ext & binary::kExtShape) != 0) {
    HBT_TRY(DecodeShape(c, e));
  } else if (e.shape.has_value()) {
    e.shape.reset();
  }
  e.addr.reset();
  if ((ext & binary::kExtAddr) != 0) {
    uint64_t z = 0;
    HBT_TRY(c.Varint(z));
    s.addr += binary::UnZigZag(z);
    e.addr = s.addr;
  }
  e.attrs = {};
  if ((ext & binary::kExtOther) != 0) {
    HBT_TRY(DecodeString(c, "attributes", e.attrs));
    if (e.attrs.empty() || !CheckOtherAttributes(e.attrs).ok()) {
      return Malformed(c, "attributes the text format cannot carry (not key=value fields joined by spaces)");
    }
  }
  // Last, so a record cut short never leaves a half-added dictionary entry.
  if (add_to_dictionary) e.tag = dictionary_.emplace_back(e.tag);
  return Decode::kOk;
}

Decode BinaryTraceReader::DecodeTag(Cursor& c, Event& e, bool& add_to_dictionary) {
  uint64_t ref = 0;
  HBT_TRY(c.Varint(ref));
  if (ref > 0) {
    if (ref > dictionary_.size()) {
      return Malformed(
          c, fmt::format("tag reference {} but the dictionary holds {} tags", ref, dictionary_.size()));
    }
    e.tag = dictionary_[ref - 1];
    return Decode::kOk;
  }
  HBT_TRY(DecodeString(c, "tag", e.tag));
  if (e.tag.empty() || HasBlankOrBreak(e.tag) || !IsValidUtf8(e.tag)) {
    return Malformed(c, "tag the text format cannot carry (empty, blank, line break, NUL or invalid UTF-8)");
  }
  add_to_dictionary = dictionary_.size() < binary::kMaxDictTags && e.tag.size() <= binary::kMaxDictTagBytes;
  return Decode::kOk;
}

Decode BinaryTraceReader::DecodeShape(Cursor& c, Event& e) {
  uint8_t dtype = 0;
  HBT_TRY(c.Byte(dtype));
  if (dtype > binary::kMaxDType) return Malformed(c, fmt::format("unknown shape dtype {}", dtype));
  uint64_t rank = 0;
  HBT_TRY(c.Varint(rank));
  if (rank > binary::kMaxRank)
    return Malformed(c, fmt::format("shape of rank {} (at most {})", rank, binary::kMaxRank));
  TensorShape& shape = e.shape.emplace();
  shape.dtype = static_cast<DType>(dtype);
  for (uint64_t i = 0; i < rank; ++i) {
    uint64_t dim = 0;
    HBT_TRY(c.Varint(dim));
    shape.dims.push_back(dim);
  }
  return Decode::kOk;
}

}  // namespace hbmsim::trace
