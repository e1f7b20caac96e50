// The data loader's figures (bench/data.sh; not a test, nothing is timed in CI):
//   BPE tokenizing MB/s on one thread and on every core, GPT-2's tokenizer,
//     a cold word cache (a fresh tokenizer) and a warm one;
//   open time of a 4 GB sparse tokens-u16 file and of a 100 MB jsonl file;
//   open time of BPE text with the token cache cold and warm.
//   sexpgpu-data-bench SOURCE_DIR WORK_DIR [bpe]     (bpe: the BPE figures alone)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "data/bpe.h"
#include "data/dataset.h"
#include "data/token_cache.h"

namespace fs = std::filesystem;
using sx::data::BpeTokenizer;
using sx::data::Dataset;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of this thread, or of the process: on a shared machine wall time
// measures the other processes too.
double cpu_seconds(clockid_t clock = CLOCK_PROCESS_CPUTIME_ID) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

sx::LoaderDecl loader(std::string source, std::string format, std::shared_ptr<sx::TokenizerSpec> tok,
                      std::optional<int64_t> vocab = {}) {
  sx::LoaderDecl l;
  l.name = "train", l.source = std::move(source), l.format = std::move(format), l.tokenizer = std::move(tok);
  l.seq_len = 1024, l.vocab = vocab, l.finalized = true;
  return l;
}

// `threads` threads each encode their own copy of `text` with one shared
// tokenizer: MB/s per thread, by wall time and by each thread's CPU time.
std::pair<double, double> bpe_mb_per_s(const BpeTokenizer& t, const std::string& text, int threads) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<double> cpu(threads);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      double c0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
      std::vector<int32_t> ids;
      t.encode(text, ids);
      cpu[i] = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
    });
  for (auto& th : pool) th.join();
  double wall = seconds_since(t0), mean_cpu = 0;
  for (double c : cpu) mean_cpu += c / threads;
  return {text.size() / 1e6 / wall, text.size() / 1e6 / mean_cpu};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "bpe")) {
    std::fprintf(stderr, "usage: sexpgpu-data-bench SOURCE_DIR WORK_DIR [bpe]\n");
    return 2;
  }
  std::string src = argv[1], work = argv[2];
  fs::create_directories(work);
  std::string tok_path = src + "/tests/fixtures/bpe/gpt2.tokenizer.json";
  std::string json = read_file(tok_path);
  std::string corpus = read_file(src + "/tests/fixtures/bpe/corpus.txt");
  int cores = static_cast<int>(std::thread::hardware_concurrency());

  std::printf("BPE (GPT-2) over tests/fixtures/bpe/corpus.txt (%.2f MB), MB/s per thread:\n", corpus.size() / 1e6);
  for (int threads : {1, cores}) {
    auto cold = BpeTokenizer::parse(json, "gpt2");  // an empty word cache
    auto [cw, cc] = bpe_mb_per_s(*cold, corpus, threads);
    auto [ww, wc] = bpe_mb_per_s(*cold, corpus, threads);
    std::printf("  %2d thread(s): cold word cache %6.1f MB/s (%6.1f MB/s of CPU time), warm %6.1f (%6.1f)\n", threads,
                cw, cc, ww, wc);
  }
  if (argc == 4) return 0;

  // A 4 GB sparse tokens-u16 file: opened without being read.
  std::string big = work + "/big.u16";
  {
    std::ofstream(big, std::ios::binary).close();
    fs::resize_file(big, 4ull << 30);
  }
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  auto ds = Dataset::load(loader(big, "tokens-u16", nullptr, 50257), "");
  double open_big = seconds_since(t0), open_big_cpu = cpu_seconds() - c0;
  std::vector<int32_t> tok(1024), tgt(1024);
  t0 = std::chrono::steady_clock::now();
  c0 = cpu_seconds();
  constexpr int kRecords = 100000;
  for (int i = 0; i < kRecords; ++i) ds->window((i * 104729ll) % ds->num_windows(), tok.data(), tgt.data());
  double per_record = seconds_since(t0) / kRecords, per_record_cpu = (cpu_seconds() - c0) / kRecords;
  std::printf(
      "4 GB sparse tokens-u16 file: open %.4f s (CPU %.4f s); a record of 1025 ids (random window, page "
      "cache) %.2f us (CPU %.2f us)\n",
      open_big, open_big_cpu, per_record * 1e6, per_record_cpu * 1e6);
  ds.reset();
  fs::remove(big);

  // A 100 MB jsonl file, read with the bytes tokenizer (parsing and the loader, not BPE).
  std::string jsonl = work + "/big.jsonl";
  {
    std::ofstream f(jsonl, std::ios::binary);
    std::string line = R"({"id": 12345, "text": ")" + std::string(900, 'x') +
                       R"(", "meta": {"source": "bench"}})"
                       "\n";
    for (size_t written = 0; written < 100'000'000; written += line.size()) f << line;
  }
  auto bytes_tok = std::make_shared<sx::TokenizerSpec>();
  bytes_tok->kind = "bytes";
  t0 = std::chrono::steady_clock::now();
  c0 = cpu_seconds();
  ds = Dataset::load(loader(jsonl, "jsonl", bytes_tok), "");
  double jw = seconds_since(t0), jc = cpu_seconds() - c0;
  std::printf("100 MB jsonl (bytes tokenizer): open %.3f s (CPU %.3f s, %.0f MB/s of CPU time), %lld tokens\n", jw, jc,
              fs::file_size(jsonl) / 1e6 / jc, static_cast<long long>(ds->num_tokens()));
  ds.reset();
  fs::remove(jsonl);

  // BPE text, token cache cold then warm: 16 copies of the corpus, each a shard (16 MB).
  std::string cache = work + "/cache";
  fs::remove_all(cache);
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  for (int i = 0; i < 16; ++i) {
    std::ofstream f(work + "/text-" + std::to_string(100 + i) + ".txt", std::ios::binary);
    f << std::to_string(i) << "\n" << corpus;  // each shard distinct: its own entry
  }
  auto bpe = std::make_shared<sx::TokenizerSpec>();
  bpe->kind = "bpe", bpe->path = tok_path;
  for (const char* when : {"cold", "warm"}) {
    t0 = std::chrono::steady_clock::now();
    c0 = cpu_seconds();
    ds = Dataset::load(loader(work + "/text-*.txt", "text", bpe), "");
    double s = seconds_since(t0), c = cpu_seconds() - c0;
    std::printf(
        "16.8 MB of BPE text in 16 shards, token cache %s: open %.3f s (CPU %.3f s, all threads), %lld tokens\n", when,
        s, c, static_cast<long long>(ds->num_tokens()));
  }
  auto& stats = sx::data::token_cache_stats();
  std::printf("  token cache: %lld hits, %lld misses\n", static_cast<long long>(stats.hits.load()),
              static_cast<long long>(stats.misses.load()));
  fs::remove_all(work);
  return 0;
}
