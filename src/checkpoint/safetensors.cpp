// The safetensors format, as the reference implementation (huggingface/safetensors)
// writes and validates it: an 8-byte little-endian header length N, N bytes of
// JSON padded with spaces to a multiple of 8, then the data section, which the
// tensors' data_offsets tile exactly (no gap, no overlap, nothing after).
#include "checkpoint/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "checkpoint/regular_file.h"
#include "util/error.h"

namespace sx::st {

namespace {

// The reference implementation refuses headers above this size too.
constexpr uint64_t kMaxHeader = 100'000'000;

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

UserError err(Code c, const std::string& name, const std::string& what, std::string help = {}) {
  return UserError(c, Span{}, fmt::format("{}: {}", name, what), std::move(help));
}

uint64_t read_u64_le(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void put_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A JSON value as a non-negative integer, or false.
bool as_u64(const nlohmann::json& j, uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(j.get<int64_t>());
    return true;
  }
  return false;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

size_t dtype_size(std::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E5M2" || d == "F8_E4M3") return 1;
  return 0;
}

bool is_float_dtype(std::string_view d) { return d == "F32" || d == "F16" || d == "BF16" || d == "F64"; }

std::string encode(const Tensors& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = std::move(m);
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    SX_ASSERT(name != "__metadata__", "a tensor named __metadata__");
    uint64_t n = 1;
    bool overflow = false;
    for (int64_t d : t.shape) {
      SX_ASSERT(d >= 0, "a negative dimension");
      overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n);
    }
    SX_ASSERT(!overflow && n == t.values.size(), "a tensor's values disagree with its shape");
    uint64_t bytes = n * 4;
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    e["dtype"] = "F32";
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + bytes};
    header[name] = std::move(e);
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + json.size() + offset);
  put_u64_le(out, json.size());
  out += json;
  for (const auto& [name, t] : tensors) {
    size_t at = out.size();
    out.resize(at + t.values.size() * 4);
    // Little-endian hosts only (x86-64, aarch64): the bytes are the floats'.
    if (!t.values.empty()) std::memcpy(out.data() + at, t.values.data(), t.values.size() * 4);
  }
  return out;
}

Header parse_header(std::string_view bytes, const std::string& name) {
  if (bytes.size() < 8)
    throw err(Code::CKPT_002, name,
              fmt::format("the file is {} bytes long, too short for the 8-byte header length", bytes.size()));
  const uint64_t n = read_u64_le(bytes.data());
  const uint64_t avail = bytes.size() - 8;
  if (n > avail)
    throw err(Code::CKPT_002, name,
              fmt::format("the header length {} runs past the end of the file ({} bytes after the length)", n,
                          avail));
  if (n > kMaxHeader)
    throw err(Code::CKPT_003, name,
              fmt::format("the header is {} bytes, more than {} allowed", n, kMaxHeader));
  std::string_view text = bytes.substr(8, n);
  if (text.empty() || text.front() != '{')
    throw err(Code::CKPT_003, name, "the header does not begin with `{`: this is not a safetensors file");
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw err(Code::CKPT_003, name, "the header is not valid JSON");
  if (!j.is_object()) throw err(Code::CKPT_003, name, "the header is not a JSON object");

  Header h;
  h.data_start = 8 + n;
  const uint64_t data_size = avail - n;
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    const nlohmann::json& v = item.value();
    if (key == "__metadata__") {
      if (!v.is_object()) throw err(Code::CKPT_003, name, "__metadata__ is not an object of strings");
      for (const auto& [mk, mv] : v.items()) {
        if (!mv.is_string())
          throw err(Code::CKPT_003, name, fmt::format("__metadata__ entry `{}` is not a string", mk));
        h.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    auto bad = [&](const std::string& what) {
      return err(Code::CKPT_003, name, fmt::format("tensor `{}`: {}", key, what));
    };
    if (!v.is_object()) throw bad("its entry is not an object");
    Entry e;
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string()) throw bad("no string dtype");
    e.dtype = dt->get<std::string>();
    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array()) throw bad("no shape (an array of non-negative integers)");
    for (const auto& d : *sh) {
      uint64_t x;
      if (!as_u64(d, x) || x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        throw bad(fmt::format("shape {} is not an array of non-negative integers", sh->dump()));
      e.shape.push_back(static_cast<int64_t>(x));
    }
    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !as_u64((*off)[0], e.begin) ||
        !as_u64((*off)[1], e.end))
      throw bad("no data_offsets [begin, end] of non-negative integers");
    if (e.begin > e.end) throw bad(fmt::format("data_offsets [{}, {}] begin after they end", e.begin, e.end));
    if (e.end > data_size)
      throw err(
          Code::CKPT_004, name,
          fmt::format("tensor `{}`: data_offsets [{}, {}] run past the end of the data section ({} bytes)",
                      key, e.begin, e.end, data_size));
    const size_t esize = dtype_size(e.dtype);
    if (esize == 0)
      throw err(Code::CKPT_006, name,
                fmt::format("tensor `{}` has dtype `{}`, which is not a safetensors dtype", key, e.dtype),
                "the dtypes read are F32, F16, BF16 and F64");
    uint64_t count = 1;
    bool overflow = false;
    for (int64_t d : e.shape) overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count);
    uint64_t nbytes = 0;
    overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(esize), &nbytes);
    if (overflow || nbytes != e.end - e.begin)
      throw err(
          Code::CKPT_005, name,
          fmt::format("tensor `{}` of shape {} and dtype {} needs {} bytes, but its data_offsets [{}, {}] "
                      "hold {}",
                      key, shape_str(e.shape), e.dtype,
                      overflow ? std::string("more than 2^64") : std::to_string(nbytes), e.begin, e.end,
                      e.end - e.begin));
    h.entries.emplace(key, std::move(e));
  }

  // The entries tile the data section exactly, in offset order.
  std::vector<std::pair<const std::string*, const Entry*>> order;
  for (const auto& [k, e] : h.entries) order.emplace_back(&k, &e);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::pair(a.second->begin, a.second->end) < std::pair(b.second->begin, b.second->end);
  });
  uint64_t at = 0;
  const std::string* prev = nullptr;
  for (const auto& [k, e] : order) {
    if (e->begin < at)
      throw err(
          Code::CKPT_004, name,
          fmt::format("tensors `{}` and `{}` overlap: `{}` begins at byte {} of the data section, before "
                      "`{}` ends at {}",
                      *prev, *k, *k, e->begin, *prev, at));
    if (e->begin > at)
      throw err(Code::CKPT_004, name,
                fmt::format("bytes {}..{} of the data section belong to no tensor (a gap before `{}`)", at,
                            e->begin, *k));
    at = e->end;
    prev = k;
  }
  if (at != data_size)
    throw err(
        Code::CKPT_004, name,
        fmt::format("the tensors end at byte {} of the data section, but it holds {} bytes", at, data_size));
  return h;
}

TensorData read_tensor(std::string_view bytes, const Header& header, const std::string& tensor,
                       const std::string& name) {
  const Entry& e = header.entries.at(tensor);
  if (!is_float_dtype(e.dtype))
    throw err(Code::CKPT_006, name,
              fmt::format(
                  "tensor `{}` has dtype {}; sexpgpu reads only floating-point tensors (F32, F16, BF16, F64)",
                  tensor, e.dtype),
              "convert the tensor to float32 before saving it");
  SX_ASSERT(header.data_start <= bytes.size() && e.end <= bytes.size() - header.data_start,
            "read_tensor: offsets outside the bytes");
  const char* p = bytes.data() + header.data_start + e.begin;
  const size_t esize = dtype_size(e.dtype);
  const size_t n = static_cast<size_t>((e.end - e.begin) / esize);
  TensorData t;
  t.shape = e.shape;
  t.values.resize(n);
  if (e.dtype == "F32") {
    if (n) std::memcpy(t.values.data(), p, n * 4);
  } else if (e.dtype == "F64") {
    for (size_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      t.values[i] = static_cast<float>(d);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint16_t u = static_cast<uint16_t>(static_cast<unsigned char>(p[2 * i]) |
                                         (static_cast<unsigned char>(p[2 * i + 1]) << 8));
      if (e.dtype == "F16") {
        t.values[i] = half_to_float(u);
      } else {  // BF16: the top half of a float32
        uint32_t bits = static_cast<uint32_t>(u) << 16;
        std::memcpy(&t.values[i], &bits, 4);
      }
    }
  }
  return t;
}

Tensors decode(std::string_view bytes, const std::string& name) {
  Header h = parse_header(bytes, name);
  Tensors out;
  for (const auto& [k, e] : h.entries) out.emplace(k, read_tensor(bytes, h, k, name));
  return out;
}

std::map<std::string, std::string> metadata(std::string_view bytes, const std::string& name) {
  return parse_header(bytes, name).metadata;
}

std::string read_bytes(const std::string& path) {
  ckpt::FileRead r = ckpt::read_regular_file(path);
  if (r.bytes) return std::move(*r.bytes);
  if (r.error == ENOENT || r.error == ENOTDIR)
    throw UserError(Code::CKPT_001, Span{}, fmt::format("{}: no such file", path));
  if (r.error == EISDIR)
    throw UserError(Code::CKPT_001, Span{}, fmt::format("{}: is a directory, not a .safetensors file", path));
  throw UserError(Code::CKPT_001, Span{}, fmt::format("{}: cannot read: {}", path, std::strerror(r.error)));
}

Tensors read_file(const std::string& path) { return decode(read_bytes(path), path); }

}  // namespace sx::st
