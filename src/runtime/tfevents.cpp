#include "runtime/tfevents.h"

#include <array>
#include <cstring>

namespace sx::tfevents {

namespace {

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // Castagnoli, reflected
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Protobuf wire format: keys and varints, length-delimited fields, fixed 32/64.
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void key(std::string& out, int field, int wire_type) { varint(out, static_cast<uint64_t>(field) << 3 | wire_type); }
void bytes_field(std::string& out, int field, std::string_view data) {
  key(out, field, 2);
  varint(out, data.size());
  out.append(data);
}
void double_field(std::string& out, int field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  key(out, field, 1);
  put_le(out, bits, 8);
}
void float_field(std::string& out, int field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  key(out, field, 5);
  put_le(out, bits, 4);
}

// event.proto: Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
// summary.proto: Summary { repeated Value value = 1; }  Value { string tag = 1; float simple_value = 2; }
constexpr int kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5;
constexpr int kValue = 1, kTag = 1, kSimpleValue = 2;

}  // namespace

uint32_t crc32c(std::string_view data) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : data) c = kTable[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

uint32_t masked_crc32c(std::string_view data) {
  uint32_t c = crc32c(data);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string record(std::string_view data) {
  std::string len;
  put_le(len, data.size(), 8);
  std::string out = len;
  put_le(out, masked_crc32c(len), 4);
  out.append(data);
  put_le(out, masked_crc32c(data), 4);
  return out;
}

std::string file_version_event(double wall_time) {
  std::string e;
  double_field(e, kWallTime, wall_time);
  bytes_field(e, kFileVersion, "brain.Event:2");
  return e;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& scalars) {
  std::string summary;
  for (const auto& [tag, v] : scalars) {
    std::string value;
    bytes_field(value, kTag, tag);
    float_field(value, kSimpleValue, v);
    bytes_field(summary, kValue, value);
  }
  std::string e;
  double_field(e, kWallTime, wall_time);
  key(e, kStep, 0);
  varint(e, static_cast<uint64_t>(step));
  bytes_field(e, kSummary, summary);
  return e;
}

}  // namespace sx::tfevents
