#include "data/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "util/error.h"

namespace sx::data {
namespace {

uint32_t le32(std::string_view s, size_t i) {
  auto p = reinterpret_cast<const unsigned char*>(s.data()) + 4 * i;
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

uint64_t token_data_offset(const std::string& name, const std::string& format, std::string_view head, uint64_t size) {
  const uint64_t width = format == "tokens-u16" ? 2 : 4;
  if (head.size() < kLlmcHeaderBytes || size < kLlmcHeaderBytes) return 0;
  bool zeros = std::all_of(head.begin() + 12, head.begin() + kLlmcHeaderBytes, [](char c) { return c == 0; });
  uint32_t magic = le32(head, 0), version = le32(head, 1), count = le32(head, 2);
  if (magic != kLlmcMagic) {
    // Raw ids that happen to look like a header (1012 zero bytes and the exact
    // count) are not worth reading as data: such a file is a damaged header.
    if (zeros && (version == 1 || version == 2) && uint64_t{count} * width == size - kLlmcHeaderBytes)
      throw UserError(Code::DATA_060, {},
                      fmt::format("{} has an llm.c header whose magic is {}, not {}", name, magic, kLlmcMagic),
                      "the file is damaged; write it again with llm.c's data scripts, or as raw ids");
    return 0;
  }
  uint32_t want = width == 2 ? 1 : 2;
  if (version != want)
    throw UserError(Code::DATA_061, {},
                    fmt::format("{} is an llm.c token file of version {}, but :format {} reads version {} ({} ids)",
                                name, version, format, want, width == 2 ? "uint16" : "uint32"),
                    version == 1   ? "use :format tokens-u16"
                    : version == 2 ? "use :format tokens-u32"
                                   : "");
  if (uint64_t{count} * width != size - kLlmcHeaderBytes)
    throw UserError(Code::DATA_062, {},
                    fmt::format("{}: its llm.c header says {} tokens, but the file holds {} bytes of ids ({} tokens)",
                                name, count, size - kLlmcHeaderBytes, (size - kLlmcHeaderBytes) / width),
                    "the file is truncated or its header is stale; write it again");
  return kLlmcHeaderBytes;
}

std::shared_ptr<const TokenFile> TokenFile::open(const ShardRef& ref, const std::string& format, int64_t vocab,
                                                 const std::atomic<bool>* stop) {
  auto reader = open_shard(ref);  // the same refusals as any shard: missing, a FIFO, a directory
  std::shared_ptr<TokenFile> f(new TokenFile());
  f->name_ = ref.display;
  f->width_ = format == "tokens-u16" ? 2 : 4;
  f->limit_ = vocab > 0 ? vocab : int64_t{1} << 31;
  f->size_ = reader->size();
  std::string head(static_cast<size_t>(std::min(f->size_, kLlmcHeaderBytes)), '\0');
  reader->read(0, head.size(), head.data());
  f->offset_ = token_data_offset(f->name_, format, head, f->size_);
  uint64_t data = f->size_ - f->offset_;
  if (data % f->width_ != 0)
    throw UserError(Code::DATA_009, {},
                    fmt::format("{} has {} bytes, not a multiple of {}: a {} file holds {}-byte token ids", f->name_,
                                f->size_, f->width_, format, f->width_),
                    "the file is truncated, or is not of this :format");
  f->count_ = static_cast<int64_t>(data / f->width_);
  f->fd_ = ::open(ref.uri.c_str(), O_RDONLY | O_CLOEXEC);  // open_shard refused what is not a regular file
  if (f->fd_ < 0)
    throw UserError(Code::DATA_013, {}, fmt::format("cannot open data file {}: {}", f->name_, std::strerror(errno)));
  struct stat st {};
  if (::fstat(f->fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) != f->size_)
    throw UserError(Code::DATA_063, {}, fmt::format("data file {} changed while it was opened", f->name_),
                    "do not rewrite a source while a run reads it; write new data to another file");
  if (f->size_ <= kCheckedAtOpen) {
    constexpr int64_t kChunk = 1 << 20;
    std::vector<int32_t> ids(kChunk);
    for (int64_t at = 0; at < f->count_; at += kChunk) {
      if (stop && stop->load(std::memory_order_relaxed))
        throw UserError(Code::DATA_013, {},
                        fmt::format("reading data file {} was cancelled by a stopping signal", f->name_));
      f->read(at, std::min(kChunk, f->count_ - at), ids.data());
    }
  }
  return f;
}

TokenFile::~TokenFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TokenFile::check_ids(const int32_t* ids, int64_t n, int64_t first) const {
  for (int64_t i = 0; i < n; ++i) {
    uint64_t id = static_cast<uint32_t>(ids[i]);
    if (id < static_cast<uint64_t>(limit_)) continue;
    throw UserError(Code::DATA_008, {},
                    fmt::format("{} at byte {}: token id {} is not below the vocabulary size {}", name_,
                                offset_ + static_cast<uint64_t>(first + i) * width_, id, limit_),
                    limit_ < (int64_t{1} << 31) ? "raise the loader's :vocab, or fix the data" : "");
  }
}

void TokenFile::read(int64_t first, int64_t n, int32_t* out) const {
  SX_ASSERT(first >= 0 && n >= 0 && first + n <= count_, "token file read out of range");
  // u32 ids land in place; u16 ids are read into the upper half of `out` and
  // widened from the front, each write behind the next read.
  size_t bytes = static_cast<size_t>(n) * width_;
  char* dst = reinterpret_cast<char*>(out) + (width_ == 2 ? bytes : 0);
  uint64_t at = offset_ + static_cast<uint64_t>(first) * width_;
  for (size_t done = 0; done < bytes;) {
    ssize_t got = ::pread(fd_, dst + done, bytes - done, static_cast<off_t>(at + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw UserError(Code::DATA_013, {},
                      fmt::format("cannot read data file {} at byte {}: {}", name_, at + done, std::strerror(errno)));
    if (got == 0) {
      struct stat st {};
      std::string now = ::fstat(fd_, &st) == 0 ? fmt::format("{} bytes", st.st_size) : "shorter";
      throw UserError(Code::DATA_063, {},
                      fmt::format("data file {} is now {}, but it held {} bytes when the run opened it (a record "
                                  "needs byte {}): it was truncated or rewritten during the run",
                                  name_, now, size_, at + done),
                      "do not rewrite a source while a run reads it; write new data to another file");
    }
    done += static_cast<size_t>(got);
  }
  if (width_ == 2) {
    auto src = reinterpret_cast<const unsigned char*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(src[2 * i] | (src[2 * i + 1] << 8));
  }
  check_ids(out, n, first);
}

}  // namespace sx::data
