#include "backend/cuda/rt/kernel_cache.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "util/error.h"

extern char** environ;

namespace sx::cuda {
namespace {

namespace fs = std::filesystem;

ProgramRequest program(int variant) {
  return ProgramRequest{fmt::format("cache-test-{}", variant),
                        fmt::format("extern \"C\" __global__ void add_{0}(float* out, const float* in, int n) {{\n"
                                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                    "  if (i < n) out[i] = in[i] + {0}.0f;\n}}\n"
                                    "extern \"C\" __global__ void mul_{0}(float* out, int n) {{\n"
                                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                    "  if (i < n) out[i] *= {0}.0f;\n}}\n",
                                    variant),
                        "sm_90",
                        {}};
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/sx-kernel-cache-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

#define REQUIRE_NVRTC()               \
  const Nvrtc* lib = nvrtc().library; \
  if (lib == nullptr) GTEST_SKIP() << "NVRTC not found: " << nvrtc().failure;

TEST(KernelCache, DefaultDirFollowsXdgThenHome) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  std::string saved_xdg = old_xdg ? old_xdg : "";
  std::string saved_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
  EXPECT_EQ(KernelCache::default_dir(), fs::path("/somewhere/cache/sexpgpu/kernels"));
  setenv("XDG_CACHE_HOME", "relative/cache", 1);  // not absolute: ignored, as the XDG spec says
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(KernelCache::default_dir(), fs::path("/home/someone/.cache/sexpgpu/kernels"));
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(KernelCache::default_dir(), fs::path());
  if (old_xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  setenv("HOME", saved_home.c_str(), 1);
}

TEST(KernelCache, TimingLine) {
  KernelCounters c{3, 40, 0, 0.1234};
  EXPECT_EQ(timing_kernels_line(c), "timing kernels 3 compiled in 0.123s, 40 cache hits");
}

TEST(KernelCache, KeyDependsOnSourceArchAndOptions) {
  REQUIRE_NVRTC();
  auto a = program(1);
  auto base = KernelCache::key(*lib, a);
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(KernelCache::key(*lib, a), base);
  auto b = a;
  b.arch = "sm_80";
  EXPECT_NE(KernelCache::key(*lib, b), base);
  b = a;
  b.options = {"-lineinfo"};
  EXPECT_NE(KernelCache::key(*lib, b), base);
  b = a;
  b.source += " ";
  EXPECT_NE(KernelCache::key(*lib, b), base);
  b = a;
  b.name = "another-name";  // the name is only for messages
  EXPECT_EQ(KernelCache::key(*lib, b), base);
}

TEST(KernelCache, ColdCompilesWarmHits) {
  REQUIRE_NVRTC();
  TempDir tmp;
  auto dir = tmp.path / "kernels";
  {
    KernelCache cold(dir);
    auto p = cold.get(*lib, program(1));
    cold.get(*lib, program(2));
    EXPECT_EQ(p.kernels.size(), 2u);
    auto c = cold.counters();
    EXPECT_EQ(c.compiled, 4);
    EXPECT_EQ(c.hits, 0);
    EXPECT_GT(c.compile_seconds, 0.0);
    EXPECT_TRUE(fs::exists(cold.entry_path(KernelCache::key(*lib, program(1)))));
  }
  KernelCache warm(dir);
  auto cold_again = lib->compile(program(1).source, "x", "sm_90");
  auto p = warm.get(*lib, program(1));
  warm.get(*lib, program(2));
  auto c = warm.counters();
  EXPECT_EQ(c.compiled, 0);
  EXPECT_EQ(c.hits, 4);
  EXPECT_EQ(c.compile_seconds, 0.0);
  EXPECT_EQ(p.cubin, cold_again.program.cubin);  // the registers report comes back too
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_GT(p.kernels[0].registers, 0);
  // Nothing but the entries is left behind (no temporary files).
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().extension(), ".sxk") << e.path();
    ++files;
  }
  EXPECT_EQ(files, 2);
}

// Cut short (a crash before the data reached the disk) or one byte changed:
// never loaded, recompiled and rewritten whole.
TEST(KernelCache, DamagedEntriesAreRecompiledAndRewritten) {
  REQUIRE_NVRTC();
  TempDir tmp;
  auto req = program(3);
  auto key = KernelCache::key(*lib, req);
  KernelCache(tmp.path).get(*lib, req);
  auto path = KernelCache(tmp.path).entry_path(key);
  auto whole = fs::file_size(path);
  for (int damage = 0; damage < 3; ++damage) {
    if (damage == 0) fs::resize_file(path, whole / 2);
    if (damage == 1) fs::resize_file(path, 0);
    if (damage == 2) {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(whole - 10));
      f.put('\x5a');
    }
    KernelCache cache(tmp.path);
    EXPECT_FALSE(cache.load(key).has_value()) << "damage " << damage;
    auto p = cache.get(*lib, req);
    EXPECT_FALSE(p.cubin.empty());
    auto c = cache.counters();
    EXPECT_EQ(c.compiled, 2) << "damage " << damage;
    EXPECT_EQ(c.hits, 0);
    EXPECT_EQ(c.corrupt_entries, 1);
    whole = fs::file_size(path);  // NVRTC's output differs by a few bytes from run to run
    EXPECT_TRUE(cache.load(key).has_value());
  }
}

TEST(KernelCache, AnUnwritableFolderCompilesAnywayAndSaysSoOnce) {
  REQUIRE_NVRTC();
  TempDir tmp;
  std::ofstream(tmp.path / "a-file") << "x";
  std::vector<std::string> warnings;
  KernelCache cache(tmp.path / "a-file" / "kernels", [&](const std::string& w) { warnings.push_back(w); });
  auto p1 = cache.get(*lib, program(4));
  auto p2 = cache.get(*lib, program(5));
  EXPECT_FALSE(p1.cubin.empty());
  EXPECT_FALSE(p2.cubin.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot write the kernel cache " + (tmp.path / "a-file" / "kernels").string()),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("kernels are compiled and not kept"), std::string::npos) << warnings[0];
  EXPECT_EQ(cache.counters().compiled, 4);
}

TEST(KernelCache, CompileErrorsAreDev031AndNotStored) {
  REQUIRE_NVRTC();
  TempDir tmp;
  KernelCache cache(tmp.path);
  ProgramRequest bad{"bad", "extern \"C\" __global__ void k() { nope(); }", "sm_90", {}};
  try {
    cache.get(*lib, bad);
    FAIL() << "expected E-DEV-031";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), Code::DEV_031);
  }
  EXPECT_TRUE(fs::is_empty(tmp.path));
}

// The child half of SharedByConcurrentProcesses: run only when the parent
// sets SX_KERNEL_CACHE_CHILD_DIR.
TEST(KernelCacheChild, GetsEveryProgram) {
  const char* dir = std::getenv("SX_KERNEL_CACHE_CHILD_DIR");
  if (dir == nullptr) GTEST_SKIP() << "only run by KernelCache.SharedByConcurrentProcesses";
  REQUIRE_NVRTC();
  KernelCache cache(dir);
  for (int round = 0; round < 2; ++round)
    for (int v = 10; v < 16; ++v) {
      auto p = cache.get(*lib, program(v));
      ASSERT_EQ(p.kernels.size(), 2u);
      ASSERT_EQ(std::string(p.cubin.begin(), p.cubin.begin() + 4),
                "\x7f"
                "ELF");
    }
  auto c = cache.counters();
  EXPECT_EQ(c.compiled + c.hits, 24);
  EXPECT_GE(c.hits, 12);            // the second round always hits
  EXPECT_EQ(c.corrupt_entries, 0);  // never saw another process's half-written entry
}

TEST(KernelCache, SharedByConcurrentProcesses) {
  REQUIRE_NVRTC();
  TempDir tmp;
  auto dir = tmp.path / "kernels";
  setenv("SX_KERNEL_CACHE_CHILD_DIR", dir.c_str(), 1);
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    std::string self = fs::read_symlink("/proc/self/exe");
    std::string filter = "--gtest_filter=KernelCacheChild.GetsEveryProgram";
    char* argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, environ), 0);
    children.push_back(pid);
  }
  unsetenv("SX_KERNEL_CACHE_CHILD_DIR");
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  KernelCache after(dir);
  for (int v = 10; v < 16; ++v) EXPECT_TRUE(after.load(KernelCache::key(*lib, program(v))).has_value()) << v;
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().extension(), ".sxk") << e.path();
    ++files;
  }
  EXPECT_EQ(files, 6);
}

}  // namespace
}  // namespace sx::cuda
