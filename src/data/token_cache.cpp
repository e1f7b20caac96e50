#include "data/token_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>

#include "util/error.h"
#include "util/fd_io.h"
#include "util/sha256.h"

namespace sx::data {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "SXTOKEN1";
constexpr size_t kHexDigest = 64;
// magic, u64 count of ids, the key, the SHA-256 of the ids; then the ids as u32 little-endian.
constexpr size_t kHeader = kMagic.size() + 8 + 2 * kHexDigest;

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string_view bytes_of(const int32_t* ids, size_t n) {
  return {reinterpret_cast<const char*>(ids), n * sizeof(int32_t)};
}

bool read_exact(int fd, char* out, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got, offset += static_cast<uint64_t>(got), n -= static_cast<size_t>(got);
  }
  return true;
}

// Appends the entry's ids to `out` when it is whole and all below `vocab`.
// Returns false, `out` unchanged, when absent; `damaged` says it was there but unusable.
bool load(const fs::path& path, const std::string& key, int64_t vocab, std::vector<int32_t>& out, bool& damaged) {
  damaged = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  damaged = true;
  struct stat st {};
  char header[kHeader];
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) < kHeader ||
      !read_exact(fd, header, kHeader, 0) || std::string_view(header, kMagic.size()) != kMagic)
    return false;
  uint64_t count = get_u64(header + kMagic.size());
  std::string_view stored_key(header + kMagic.size() + 8, kHexDigest);
  std::string_view digest(header + kMagic.size() + 8 + kHexDigest, kHexDigest);
  if (stored_key != key || count > (static_cast<uint64_t>(st.st_size) - kHeader) / 4 ||
      kHeader + 4 * count != static_cast<uint64_t>(st.st_size))
    return false;
  size_t old = out.size();
  if (out.capacity() - old < count) out.reserve(std::max<size_t>(old + count, 2 * out.capacity()));
  out.resize(old + count);
  bool ok = read_exact(fd, reinterpret_cast<char*>(out.data() + old), 4 * count, kHeader) &&
            sha256_hex(bytes_of(out.data() + old, count)) == digest;
  for (size_t i = old; ok && i < out.size(); ++i) ok = out[i] >= 0 && out[i] < vocab;
  if (!ok) {
    out.resize(old);
    return false;
  }
  damaged = false;
  return true;
}

std::mutex warn_mutex;
bool warned = false;

void warn_unwritable(const fs::path& dir, const std::string& why) {
  std::lock_guard lock(warn_mutex);
  if (warned) return;
  warned = true;
  std::cerr << fmt::format(
      "warning: cannot write the token cache {}: {}; the text is tokenized again at every run\n",
      dir.empty() ? std::string("(no folder: neither XDG_CACHE_HOME nor HOME is set)") : dir.string(), why);
}

void store(const fs::path& dir, const std::string& key, const int32_t* ids, size_t n) {
  if (dir.empty()) return warn_unwritable(dir, "no folder");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return warn_unwritable(dir, ec.message());
  std::string_view payload = bytes_of(ids, n);
  std::string header(kMagic);
  put_u64(header, n);
  header += key;
  header += sha256_hex(payload);
  // A name no other process or thread uses; the rename makes the entry appear
  // whole. No fsync: an entry a crash cut short fails its check and is rebuilt.
  static std::atomic<unsigned> serial{0};
  fs::path temp = dir / fmt::format(".{}.tmp-{}-{}", key, ::getpid(), serial++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return warn_unwritable(dir, std::strerror(errno));
  bool ok = write_all(fd, header) && write_all(fd, payload);
  int err = errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;
  if (ok && std::rename(temp.c_str(), (dir / (key + ".tok")).c_str()) != 0) ok = false, err = errno;
  if (!ok) {
    ::unlink(temp.c_str());
    return warn_unwritable(dir, std::strerror(err));
  }
  ++token_cache_stats().stored;
}

}  // namespace

TokenCacheStats& token_cache_stats() {
  static TokenCacheStats stats;
  return stats;
}

fs::path token_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return fs::path(xdg) / "sexpgpu" / "tokens";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "sexpgpu" / "tokens";
  return {};
}

std::string token_cache_key(const FormatSpec& spec, std::string_view bytes) {
  SX_ASSERT(spec.tokenizer && spec.tokenizer->bpe(), "only bpe text is cached");
  std::string text =
      fmt::format("sexpgpu tokens v{}\nformat {}\nfield {}\ntokenizer {}\ndata {}\n", kTokenizerVersion, spec.format,
                  spec.format == "jsonl" ? spec.field : "", spec.tokenizer->bpe()->fingerprint(), sha256_hex(bytes));
  return sha256_hex(text);
}

void decode_shard_cached(const FormatSpec& spec, const std::string& name, std::string_view bytes,
                         std::vector<int32_t>& out) {
  if (!spec.tokenizer || !spec.tokenizer->bpe() || spec.format == "tokens-u16" || spec.format == "tokens-u32")
    return decode_shard(spec, name, bytes, out);
  fs::path dir = token_cache_dir();
  std::string key = token_cache_key(spec, bytes);
  bool damaged = false;
  if (!dir.empty() && load(dir / (key + ".tok"), key, spec.tokenizer->vocab(), out, damaged)) {
    ++token_cache_stats().hits;
    return;
  }
  ++(damaged ? token_cache_stats().rebuilt : token_cache_stats().misses);
  size_t old = out.size();
  decode_shard(spec, name, bytes, out);
  store(dir, key, out.data() + old, out.size() - old);
}

}  // namespace sx::data
