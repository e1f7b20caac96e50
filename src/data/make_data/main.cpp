// sexpgpu-make-data OUT_DIR: writes the examples' deterministic data,
// OUT_DIR/train.txt (about 200 KB) and OUT_DIR/valid.txt (about 20 KB), over
// the alphabet "abcdefghijklmnopqrstuvwxyz .,;\n!": one small task a line —
//   sort dcba; abcd.     rev abc; cba.     copy hello; hello.
//   add three plus four; seven.     count aaaa; four!
// so a tiny transformer's loss falls far below ln(32) in a few hundred steps.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "graph/philox.h"

namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed) {}
  // Uniform in [0, n) for small n (bias below 2^-32 n, irrelevant for data).
  int below(int n) { return static_cast<int>((uint64_t{sx::philox::bits(seed_, 7, 0, e_++)} * n) >> 32); }

 private:
  uint64_t seed_;
  uint64_t e_ = 0;
};

const char* kNumbers[] = {"zero",     "one",     "two",     "three",     "four",    "five",   "six",
                          "seven",    "eight",   "nine",    "ten",       "eleven",  "twelve", "thirteen",
                          "fourteen", "fifteen", "sixteen", "seventeen", "eighteen"};

std::string letters(Rng& r, int min_len, int max_len) {
  int n = min_len + r.below(max_len - min_len + 1);
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>('a' + r.below(12));  // a-l: learnable sooner
  return s;
}

std::string line(Rng& r) {
  switch (r.below(5)) {
    case 0: {
      std::string s = letters(r, 3, 5), t = s;
      std::sort(t.begin(), t.end());
      return "sort " + s + "; " + t + ".";
    }
    case 1: {
      std::string s = letters(r, 3, 5);
      return "rev " + s + "; " + std::string(s.rbegin(), s.rend()) + ".";
    }
    case 2: {
      std::string s = letters(r, 3, 6);
      return "copy " + s + "; " + s + ".";
    }
    case 3: {
      int a = r.below(10), b = r.below(10);
      return std::string("add ") + kNumbers[a] + " plus " + kNumbers[b] + "; " + kNumbers[a + b] + ".";
    }
    default: {
      int n = 1 + r.below(9);
      return "count " + std::string(n, static_cast<char>('a' + r.below(12))) + "; " + kNumbers[n] + "!";
    }
  }
}

bool write(const std::string& path, uint64_t seed, size_t bytes) {
  Rng r(seed);
  std::string text;
  while (text.size() < bytes) text += line(r) + "\n";
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sexpgpu-make-data OUT_DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  if (!write(dir + "/train.txt", 1, 200000) || !write(dir + "/valid.txt", 2, 20000)) {
    std::fprintf(stderr, "sexpgpu-make-data: cannot write to %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
