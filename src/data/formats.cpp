#include "data/formats.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "data/token_file.h"
#include "util/error.h"

namespace sx::data {
namespace {

void decode_tokens(const FormatSpec& spec, const std::string& name, std::string_view file, size_t width,
                   std::vector<int32_t>& out) {
  uint64_t header = token_data_offset(name, spec.format, file.substr(0, kLlmcHeaderBytes), file.size());
  std::string_view bytes = file.substr(header);
  if (bytes.size() % width != 0)
    throw UserError(Code::DATA_009, {},
                    fmt::format("{} has {} bytes, not a multiple of {}: a {} file holds {}-byte token ids", name,
                                file.size(), width, spec.format, width),
                    "the file is truncated, or is not of this :format");
  int64_t limit = spec.vocab > 0 ? spec.vocab : int64_t{1} << 31;
  auto p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size() / width;  // doubling, not exact: many shards stay linear
  if (out.capacity() - out.size() < n) out.reserve(std::max(out.size() + n, 2 * out.capacity()));
  for (size_t off = 0; off < bytes.size(); off += width) {
    uint64_t id = 0;
    for (size_t b = 0; b < width; ++b) id |= uint64_t{p[off + b]} << (8 * b);
    if (id >= static_cast<uint64_t>(limit))
      throw UserError(
          Code::DATA_008, {},
          fmt::format("{} at byte {}: token id {} is not below the vocabulary size {}", name, header + off, id, limit),
          spec.vocab > 0 ? "raise the loader's :vocab, or fix the data" : "");
    out.push_back(static_cast<int32_t>(id));
  }
}

void decode_jsonl(const FormatSpec& spec, const std::string& name, std::string_view bytes, std::vector<int32_t>& out) {
  int64_t line_no = 0;
  for (size_t pos = 0; pos < bytes.size();) {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) nl = bytes.size();
    std::string_view line = bytes.substr(pos, nl - pos);
    pos = nl + 1, ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank
    auto bad = [&](const std::string& what) {
      return UserError(Code::DATA_010, {}, fmt::format("{}:{}: {}", name, line_no, what),
                       fmt::format("each line must be a JSON object with a string field \"{}\"", spec.field));
    };
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw bad(fmt::format("not valid JSON (at byte {} of the line)", e.byte));
    } catch (const nlohmann::json::exception&) {  // a number past double's range
      throw bad("not valid JSON (a number out of range)");
    }
    if (!j.is_object()) throw bad(fmt::format("expected a JSON object, found {}", j.type_name()));
    auto it = j.find(spec.field);
    if (it == j.end()) throw bad(fmt::format("the object has no field \"{}\"", spec.field));
    if (!it->is_string()) throw bad(fmt::format("field \"{}\" is {}, not a string", spec.field, it->type_name()));
    spec.tokenizer->encode(it->get_ref<const std::string&>(), {name, line_no, spec.field}, out);
  }
}

}  // namespace

void decode_shard(const FormatSpec& spec, const std::string& name, std::string_view bytes, std::vector<int32_t>& out) {
  if (spec.format == "tokens-u16") return decode_tokens(spec, name, bytes, 2, out);
  if (spec.format == "tokens-u32") return decode_tokens(spec, name, bytes, 4, out);
  SX_ASSERT(spec.tokenizer, "text formats need a tokenizer");
  if (spec.format == "jsonl") return decode_jsonl(spec, name, bytes, out);
  SX_ASSERT(spec.format == "text", "unknown data format " + spec.format);
  spec.tokenizer->encode(bytes, {name, 0, {}}, out);
}

}  // namespace sx::data
