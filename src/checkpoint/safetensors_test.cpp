#include "checkpoint/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace sx::st {
namespace {

std::string u64le(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// A file from a header's JSON text (unpadded, as some writers leave it) and data.
std::string file_of(const std::string& json, const std::string& data) {
  return u64le(json.size()) + json + data;
}

std::string f32_bytes(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

// The code of the UserError `f` throws, or "" when it throws none.
template <typename F>
std::string code_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const UserError& e) {
    if (message) *message = e.what();
    return code_info(e.code()).name;
  }
  return "";
}

Tensors sample() {
  Tensors t;
  t["blocks.0.attn.wq.w"] = {{2, 3}, {1, 2, 3, 4, 5, 6}};
  t["embed.w"] = {{3}, {-1.5f, 0.0f, 1e-30f}};
  t["scalar"] = {{}, {42.0f}};
  t["empty"] = {{0, 4}, {}};
  return t;
}

TEST(Safetensors, RoundTrip) {
  Tensors t = sample();
  std::map<std::string, std::string> meta = {{"format", "pt"}, {"step", "12"}};
  std::string bytes = encode(t, meta);
  Tensors back = decode(bytes, "x.safetensors");
  ASSERT_EQ(back.size(), t.size());
  for (const auto& [k, v] : t) {
    ASSERT_TRUE(back.count(k)) << k;
    EXPECT_EQ(back[k].shape, v.shape) << k;
    EXPECT_EQ(back[k].values, v.values) << k;
  }
  EXPECT_EQ(metadata(bytes, "x.safetensors"), meta);
}

TEST(Safetensors, HeaderIsPaddedAndOrdered) {
  std::string bytes = encode(sample(), {{"format", "pt"}});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u);
  std::string json = bytes.substr(8, n);
  EXPECT_EQ(json.find(R"({"__metadata__":{"format":"pt"},"blocks.0.attn.wq.w":{"dtype":"F32","shape":[2,3],)"
                      R"("data_offsets":[0,24]},"embed.w":)"),
            0u)
      << json;
  EXPECT_EQ(json.find_last_not_of(' '), json.rfind('}'));
  // Without metadata the header has no __metadata__ entry.
  EXPECT_EQ(encode({}, {}), u64le(8) + "{}      ");
  EXPECT_TRUE(decode(encode({}, {}), "e").empty());
}

// A file as Python's `safetensors.torch.save_file` writes it: __metadata__
// first, tensors ordered by dtype alignment (largest first), then name; the
// header padded with spaces to a multiple of 8. Written out by hand here.
TEST(Safetensors, ReadsAFileWrittenByTheReferenceWriter) {
  std::string json =
      R"({"__metadata__":{"format":"pt"},"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
      R"("a":{"dtype":"F32","shape":[1,2],"data_offsets":[16,24]},)"
      R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[24,28]},)"
      R"("h":{"dtype":"F16","shape":[4],"data_offsets":[28,36]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string data;
  double d[2] = {0.25, -3.0};
  data.append(reinterpret_cast<const char*>(d), 16);
  data += f32_bytes({1.5f, -2.0f});
  data += std::string("\x80\x3f\x00\xc0", 4);  // bf16 1.0, -2.0
  // f16: 1.0, -0.5, 65504 (max), 2^-24 (smallest subnormal)
  data += std::string("\x00\x3c\x00\xb8\xff\x7b\x01\x00", 8);
  std::string bytes = file_of(json, data);
  Tensors t = decode(bytes, "ref.safetensors");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t["d"].values, (std::vector<float>{0.25f, -3.0f}));
  EXPECT_EQ(t["a"].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(t["a"].values, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(t["b"].values, (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(t["h"].values, (std::vector<float>{1.0f, -0.5f, 65504.0f, std::ldexp(1.0f, -24)}));
  EXPECT_EQ(metadata(bytes, "ref.safetensors").at("format"), "pt");
}

struct Bad {
  const char* what;
  std::string bytes;
  const char* code;
};

TEST(Safetensors, RefusesEachCorruptionWithItsCode) {
  const std::string good = encode(sample());
  const std::string one = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::vector<Bad> cases = {
      {"empty", "", "E-CKPT-002"},
      {"7 bytes", std::string(7, '\0'), "E-CKPT-002"},
      {"header past the end", u64le(1000) + "{}", "E-CKPT-002"},
      {"huge header length", u64le(~0ull) + "{}", "E-CKPT-002"},
      {"truncated data", good.substr(0, good.size() - 1), "E-CKPT-004"},
      {"trailing data", good + "x", "E-CKPT-004"},
      {"not json", file_of("{nope", ""), "E-CKPT-003"},
      {"not an object", file_of("[1,2]", ""), "E-CKPT-003"},
      {"empty header", file_of("", ""), "E-CKPT-003"},
      {"entry not an object", file_of(R"({"a":3})", ""), "E-CKPT-003"},
      {"no dtype", file_of(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})), "E-CKPT-003"},
      {"negative dim", file_of(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", f32_bytes({1})),
       "E-CKPT-003"},
      {"float dim", file_of(R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})", f32_bytes({1})),
       "E-CKPT-003"},
      {"offsets reversed",
       file_of(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", f32_bytes({1})), "E-CKPT-003"},
      {"one offset", file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", f32_bytes({1})),
       "E-CKPT-003"},
      {"metadata not strings", file_of(R"({"__metadata__":{"a":1}})", ""), "E-CKPT-003"},
      {"bad utf-8", file_of("{\"\xff\":{}}", ""), "E-CKPT-003"},
      {"offsets past the end", file_of(one, f32_bytes({1})), "E-CKPT-004"},
      {"offsets past 2^64",
       file_of(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551615,18446744073709551615]}})",
           ""),
       "E-CKPT-004"},
      {"overlap",
       file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               f32_bytes({1, 2, 3})),
       "E-CKPT-004"},
      {"gap",
       file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
               f32_bytes({1, 2, 3})),
       "E-CKPT-004"},
      {"size disagrees",
       file_of(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", f32_bytes({1, 2})), "E-CKPT-005"},
      {"shape product overflows",
       file_of(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""),
       "E-CKPT-005"},
      {"unknown dtype",
       file_of(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1, 2})), "E-CKPT-006"},
      {"integer dtype",
       file_of(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", f32_bytes({1, 2})), "E-CKPT-006"},
      {"i32 dtype", file_of(R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1, 2})),
       "E-CKPT-006"},
  };
  for (const auto& c : cases) {
    std::string msg;
    EXPECT_EQ(code_of([&] { decode(c.bytes, "bad.safetensors"); }, &msg), c.code) << c.what;
    if (!msg.empty()) {
      EXPECT_NE(msg.find("bad.safetensors"), std::string::npos) << c.what << ": " << msg;
    }
  }
}

TEST(Safetensors, IntegerDtypesParseButAreNotReadAsFloats) {
  std::string bytes =
      file_of(R"({"ids":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1, 2}));
  Header h = parse_header(bytes, "i.safetensors");
  ASSERT_EQ(h.entries.count("ids"), 1u);
  EXPECT_EQ(h.entries["ids"].dtype, "I32");
  std::string msg;
  EXPECT_EQ(code_of([&] { read_tensor(bytes, h, "ids", "i.safetensors"); }, &msg), "E-CKPT-006");
  EXPECT_NE(msg.find("I32"), std::string::npos) << msg;
}

TEST(Safetensors, EveryPrefixOfAGoodFileIsRefusedCleanly) {
  const std::string good = encode(sample(), {{"k", "v"}});
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_NE(code_of([&] { decode(std::string_view(good).substr(0, n), "p"); }), "") << n;
}

TEST(Safetensors, ReadFile) {
  auto dir = std::filesystem::temp_directory_path() / ("sx_st_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "m.safetensors").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << encode(sample());
  }
  EXPECT_EQ(read_file(path).size(), sample().size());
  std::string msg;
  EXPECT_EQ(code_of([&] { read_file((dir / "missing.safetensors").string()); }, &msg), "E-CKPT-001");
  EXPECT_NE(msg.find("missing.safetensors"), std::string::npos);
  EXPECT_EQ(code_of([&] { read_file(dir.string()); }), "E-CKPT-001");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sx::st
