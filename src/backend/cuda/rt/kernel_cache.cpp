#include "backend/cuda/rt/kernel_cache.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include "util/error.h"
#include "util/fd_io.h"

namespace sx::cuda {
namespace {

// Bumped when the entry layout or the key's contents change: old entries
// are then simply never looked up again.
constexpr std::string_view kMagic = "SXKC0001";
constexpr size_t kDigest = 32;
constexpr size_t kHeader = 8 + 8 + kDigest;  // magic, payload length, SHA-256 of the payload

std::string sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), n);
}

std::string hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_u64(std::string_view s) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}
void put_string(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out += s;
}
// Reads a length-prefixed string at `pos`; false when it runs past the end.
bool get_string(std::string_view s, size_t& pos, std::string& out) {
  if (s.size() - pos < 8) return false;
  uint64_t n = get_u64(s.substr(pos));
  pos += 8;
  if (s.size() - pos < n) return false;
  out.assign(s.substr(pos, n));
  pos += n;
  return true;
}

void warn_to_stderr(const std::string& line) { std::cerr << "warning: " << line << "\n"; }

}  // namespace

std::string timing_kernels_line(const KernelCounters& c) {
  return fmt::format("timing kernels {} compiled in {:.3f}s, {} cache hits", c.compiled, c.compile_seconds, c.hits);
}

KernelCache::KernelCache(std::filesystem::path dir, Warn warn)
    : dir_(std::move(dir)), warn_(warn ? std::move(warn) : Warn(warn_to_stderr)) {}

std::filesystem::path KernelCache::default_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::filesystem::path(xdg) / "sexpgpu" / "kernels";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::filesystem::path(home) / ".cache" / "sexpgpu" / "kernels";
  return {};
}

std::string KernelCache::key(const Nvrtc& nvrtc, const ProgramRequest& req) {
  std::string text(kMagic);
  put_string(text, req.arch);
  put_string(text, nvrtc.version());
  put_u64(text, req.options.size());
  for (const auto& o : req.options) put_string(text, o);
  put_string(text, req.source);
  return hex(sha256(text));
}

std::filesystem::path KernelCache::entry_path(const std::string& key) const { return dir_ / (key + ".sxk"); }

std::optional<CompiledProgram> KernelCache::load(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(entry_path(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < kHeader || data.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  std::string_view payload = std::string_view(data).substr(kHeader);
  if (get_u64(std::string_view(data).substr(8)) != payload.size()) return std::nullopt;
  if (sha256(payload) != std::string_view(data).substr(16, kDigest)) return std::nullopt;
  size_t pos = 0;
  std::string stored_key, log, cubin;
  if (!get_string(payload, pos, stored_key) || stored_key != key || !get_string(payload, pos, log) ||
      !get_string(payload, pos, cubin) || pos != payload.size())
    return std::nullopt;
  CompiledProgram p;
  p.cubin.assign(cubin.begin(), cubin.end());
  p.log = std::move(log);
  p.kernels = parse_ptxas_report(p.log);
  return p;
}

bool KernelCache::store(const std::string& key, const CompiledProgram& program) {
  if (dir_.empty()) {
    warn_unwritable("neither XDG_CACHE_HOME nor HOME is set");
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    warn_unwritable(ec.message());
    return false;
  }
  std::string payload;
  put_string(payload, key);
  put_string(payload, program.log);
  put_string(payload, std::string_view(reinterpret_cast<const char*>(program.cubin.data()), program.cubin.size()));
  std::string entry(kMagic);
  put_u64(entry, payload.size());
  entry += sha256(payload);
  entry += payload;

  // A name no other process or thread uses; the rename makes the entry
  // appear whole. No fsync: an entry lost or cut short by a crash fails its
  // check on the next load and is recompiled.
  static std::atomic<unsigned> serial{0};
  auto final_path = entry_path(key);
  auto temp = dir_ / fmt::format(".{}.tmp-{}-{}", key, getpid(), serial++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    warn_unwritable(std::strerror(errno));
    return false;
  }
  bool ok = write_all(fd, entry);
  int err = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && std::rename(temp.c_str(), final_path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    warn_unwritable(std::strerror(err));
  }
  return ok;
}

void KernelCache::warn_unwritable(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (warned_) return;
  warned_ = true;
  warn_(fmt::format("cannot write the kernel cache {}: {}; kernels are compiled and not kept",
                    dir_.empty() ? std::string("(no folder)") : dir_.string(), why));
}

CompiledProgram KernelCache::get(const Nvrtc& nvrtc, const ProgramRequest& req, bool* from_cache) {
  std::string k = key(nvrtc, req);
  bool present = !dir_.empty() && std::filesystem::exists(entry_path(k));
  if (auto cached = load(k)) {
    std::lock_guard lock(mutex_);
    counters_.hits += static_cast<int>(cached->kernels.size());
    if (from_cache) *from_cache = true;
    return std::move(*cached);
  }
  auto start = std::chrono::steady_clock::now();
  CompiledProgram program = compile_or_throw(nvrtc, req.source, req.name, req.arch, req.options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  {
    std::lock_guard lock(mutex_);
    counters_.compiled += static_cast<int>(program.kernels.size());
    counters_.compile_seconds += seconds;
    if (present) ++counters_.corrupt_entries;
  }
  store(k, program);
  if (from_cache) *from_cache = false;
  return program;
}

KernelCounters KernelCache::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace sx::cuda
