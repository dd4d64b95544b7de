#include "trace/binary/binary_writer.h"

#include <zlib.h>

#include <cstring>

#include "fmt/format.h"
#include "trace/binary/format.h"
#include "trace/text/field_rules.h"

namespace hbmsim::trace {
namespace {

constexpr size_t kFlushBytes = size_t{1} << 16;

absl::Status Error(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// The text format's rules (field_rules.h), plus this format's own caps.
absl::Status CheckField(std::string_view what, std::string_view text) {
  if (absl::Status s = CheckTextField(what, text); !s.ok()) return s;
  if (text.size() > binary::kMaxStringBytes)
    return Error(fmt::format("{} longer than 1 MiB, which a .hbt cannot hold", what));
  return absl::OkStatus();
}

absl::Status CheckEvent(const Event& e) {
  if (absl::Status s = CheckAttributePlaces(e); !s.ok()) return s;
  if (e.shape.has_value() && e.shape->dims.size() > binary::kMaxRank) {
    return Error(fmt::format("a shape of rank {}, which a .hbt cannot hold (at most {})",
                             e.shape->dims.size(), binary::kMaxRank));
  }
  if (!e.tag.empty()) {
    if (absl::Status s = CheckField("tag", e.tag); !s.ok()) return s;
  }
  if (absl::Status s = CheckOtherAttributes(e.attrs); !s.ok()) return s;
  if (e.attrs.size() > binary::kMaxStringBytes)
    return Error("attributes longer than 1 MiB, which a .hbt cannot hold");
  if (e.kind == EventKind::kMark) {
    if (e.label.empty()) return Error("a mark without a label, which a trace cannot hold");
    return CheckField("mark label", e.label);
  }
  return absl::OkStatus();
}

absl::Status CheckMetadata(std::string_view key, std::string_view value) {
  if (absl::Status s = CheckMetadataEntry(key, value); !s.ok()) return s;
  if (key.size() > binary::kMaxStringBytes || value.size() > binary::kMaxStringBytes) {
    return Error(fmt::format("metadata '{}' longer than 1 MiB, which a .hbt cannot hold", key));
  }
  return absl::OkStatus();
}

}  // namespace

BinaryTraceWriter::BinaryTraceWriter(std::ostream& out, BinaryWriterOptions options)
    : out_(out), options_(options), buf_(kFlushBytes + 4096) {
  if (options_.compress) {
    cctx_ = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, options_.zstd_level);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);  // `zstd -t` and our reader verify it
    zbuf_.resize(ZSTD_CStreamOutSize());
  }
}

BinaryTraceWriter::~BinaryTraceWriter() {
  if (cctx_ != nullptr) ZSTD_freeCCtx(cctx_);
}

void BinaryTraceWriter::PutVarint(uint64_t v) {
  used_ = static_cast<size_t>(binary::PutVarint(buf_.data() + used_, v) - buf_.data());
}

void BinaryTraceWriter::PutString(std::string_view s) {
  PutVarint(s.size());
  std::memcpy(buf_.data() + used_, s.data(), s.size());
  used_ += s.size();
}

absl::Status BinaryTraceWriter::WriteHeader(const TraceMetadata& metadata) {
  if (header_written_) return Error("the trace header must be written once, before any event");
  size_t bytes = 64;
  for (const auto& [key, value] : metadata.entries) {
    if (absl::Status s = CheckMetadata(key, TrimBlanks(value)); !s.ok()) return s;
    bytes += key.size() + value.size() + 20;
  }
  header_written_ = true;
  if (buf_.size() < used_ + bytes) buf_.resize(used_ + bytes);
  std::memcpy(buf_.data() + used_, binary::kMagic.data(), binary::kMagic.size());
  used_ += binary::kMagic.size();
  PutVarint(binary::kVersion);
  buf_[used_++] = 0;  // header flags: none defined in version 1
  PutVarint(metadata.entries.size());
  for (const auto& [key, value] : metadata.entries) {
    PutString(key);
    PutString(TrimBlanks(value));  // as a text reader would read it back
  }
  return FlushIfFull();
}

void BinaryTraceWriter::PutTag(std::string_view tag) {
  auto it = dictionary_.find(absl::string_view(tag.data(), tag.size()));
  if (it != dictionary_.end()) {
    PutVarint(it->second);
    return;
  }
  PutVarint(0);
  PutString(tag);
  // The reader grows its dictionary by the same rule (format.h).
  if (dictionary_.size() < binary::kMaxDictTags && tag.size() <= binary::kMaxDictTagBytes) {
    const uint32_t ref = static_cast<uint32_t>(dictionary_.size() + 1);
    dictionary_.emplace(std::string(tag), ref);
  }
}

void BinaryTraceWriter::PutAttributes(const Event& e, uint8_t ext) {
  if (e.time_us.has_value()) {
    PutVarint(binary::ZigZag(*e.time_us - state_.time_us));
    state_.time_us = *e.time_us;
  }
  if (e.stream.value() != 0) PutVarint(e.stream.value());
  if (!e.tag.empty()) PutTag(e.tag);
  if ((ext & binary::kExtDevice) != 0) PutVarint(e.device.value());
  if ((ext & binary::kExtShape) != 0) {
    buf_[used_++] = static_cast<uint8_t>(e.shape->dtype);
    PutVarint(e.shape->dims.size());
    for (const uint64_t d : e.shape->dims) PutVarint(d);
  }
  if ((ext & binary::kExtAddr) != 0) {
    PutVarint(binary::ZigZag(*e.addr - state_.addr));
    state_.addr = *e.addr;
  }
  if ((ext & binary::kExtOther) != 0) PutString(e.attrs);
}

absl::Status BinaryTraceWriter::Write(const Event& e) {
  if (finished_) return Error("cannot write an event after Finish()");
  if (absl::Status s = CheckEvent(e); !s.ok()) return s;
  if (!header_written_) {
    if (absl::Status s = WriteHeader(TraceMetadata{}); !s.ok()) return s;
  }
  const size_t rank = e.shape.has_value() ? e.shape->dims.size() : 0;
  const size_t most = 128 + e.tag.size() + e.label.size() + e.attrs.size() + 10 * rank;
  if (buf_.size() < used_ + most) buf_.resize(used_ + most);
  uint8_t ext = 0;
  if (e.device.value() != 0) ext |= binary::kExtDevice;
  if (e.shape.has_value()) ext |= binary::kExtShape;
  if (e.addr.has_value()) ext |= binary::kExtAddr;
  if (!e.attrs.empty()) ext |= binary::kExtOther;
  uint8_t head = static_cast<uint8_t>(e.kind);
  if (e.time_us.has_value()) head |= binary::kHasTime;
  if (e.stream.value() != 0) head |= binary::kHasStream;
  if (!e.tag.empty()) head |= binary::kHasTag;
  if (ext != 0) head |= binary::kHasExt;
  buf_[used_++] = head;
  if (ext != 0) buf_[used_++] = ext;
  if (e.kind == EventKind::kMark) {
    PutString(e.label);
  } else {
    uint64_t& base = IsProgramEvent(e.kind) ? state_.program_id : state_.alloc_id;
    PutVarint(binary::ZigZag(e.id - base));
    if (e.kind == EventKind::kAlloc || IsProgramEvent(e.kind)) base = e.id;
  }
  if (HasBytesField(e.kind)) PutVarint(e.bytes.value());
  PutAttributes(e, ext);
  ++events_;
  return FlushIfFull();
}

absl::Status BinaryTraceWriter::FlushIfFull() {
  if (used_ < kFlushBytes) return absl::OkStatus();
  const size_t n = used_;
  used_ = 0;
  return Emit(buf_.data(), n, ZSTD_e_continue);
}

absl::Status BinaryTraceWriter::Emit(const uint8_t* data, size_t n, ZSTD_EndDirective mode) {
  crc_ = static_cast<uint32_t>(crc32_z(crc_, data, n));
  if (cctx_ == nullptr) {
    out_.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
  } else {
    ZSTD_inBuffer in{data, n, 0};
    bool done = false;
    while (!done) {
      ZSTD_outBuffer out{zbuf_.data(), zbuf_.size(), 0};
      const size_t left = ZSTD_compressStream2(cctx_, &out, &in, mode);
      if (ZSTD_isError(left)) return Error(fmt::format("zstd: {}", ZSTD_getErrorName(left)));
      out_.write(reinterpret_cast<const char*>(zbuf_.data()), static_cast<std::streamsize>(out.pos));
      done = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
    }
  }
  if (!out_) return Error("write error");
  return absl::OkStatus();
}

absl::Status BinaryTraceWriter::Finish() {
  if (finished_) return Error("Finish() called twice");
  if (!header_written_) {
    if (absl::Status s = WriteHeader(TraceMetadata{}); !s.ok()) return s;
  }
  finished_ = true;
  if (buf_.size() < used_ + 16) buf_.resize(used_ + 16);
  buf_[used_++] = binary::kEndOfTrace;
  PutVarint(events_);
  const uint32_t crc = static_cast<uint32_t>(crc32_z(crc_, buf_.data(), used_));
  for (size_t i = 0; i < binary::kChecksumBytes; ++i) buf_[used_++] = static_cast<uint8_t>(crc >> (8 * i));
  const size_t n = used_;
  used_ = 0;
  if (absl::Status s = Emit(buf_.data(), n, ZSTD_e_end); !s.ok()) return s;
  out_.flush();
  if (!out_) return Error("write error");
  return absl::OkStatus();
}

}  // namespace hbmsim::trace
