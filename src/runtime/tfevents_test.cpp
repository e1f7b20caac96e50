#include "runtime/tfevents.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sx::tfevents {
namespace {

TEST(Tfevents, Crc32cKnownAnswers) {
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);            // the CRC-32C check value (RFC 3720)
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4: 32 bytes of zeros
}

TEST(Tfevents, RecordFraming) {
  std::string r = record("abc");
  ASSERT_EQ(r.size(), 8u + 4 + 3 + 4);
  uint64_t n;
  std::memcpy(&n, r.data(), 8);
  EXPECT_EQ(n, 3u);
  uint32_t len_crc, data_crc;
  std::memcpy(&len_crc, r.data() + 8, 4);
  std::memcpy(&data_crc, r.data() + 15, 4);
  EXPECT_EQ(len_crc, masked_crc32c(r.substr(0, 8)));
  EXPECT_EQ(r.substr(12, 3), "abc");
  EXPECT_EQ(data_crc, masked_crc32c("abc"));
}

TEST(Tfevents, ScalarEventBytes) {
  // wall_time 0 (field 1, fixed64), step 300 (field 2, varint ac 02),
  // summary (field 5) { value (field 1) { tag "a" (field 1), simple_value 1.0f (field 2, fixed32) } }
  std::string e = scalars_event(0.0, 300, {{"a", 1.0f}});
  std::string want = std::string("\x09", 1) + std::string(8, '\0') + "\x10\xac\x02" + "\x2a\x0a" + "\x0a\x08" +
                     "\x0a\x01"
                     "a" +
                     "\x15" + std::string("\x00\x00\x80\x3f", 4);
  EXPECT_EQ(e, want);
}

}  // namespace
}  // namespace sx::tfevents
