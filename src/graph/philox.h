#pragma once
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11), the counter-based generator of Random123, cuRAND and JAX: a pure
// function of (counter, key), so every backend — reference, CPU, CUDA — draws
// the same numbers for the same element without sharing state.
#include <array>
#include <cmath>
#include <cstdint>

namespace sx::philox {

using Block = std::array<uint32_t, 4>;
using Key = std::array<uint32_t, 2>;

inline Block philox4x32_10(Block c, Key k) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k = {k[0] + kW0, k[1] + kW1};
    uint64_t p0 = uint64_t{kM0} * c[0], p1 = uint64_t{kM1} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

// The sexpgpu convention: element e of a tensor drawn under (seed, stream,
// offset) is word e % 4 of the block at counter {e / 4, stream, offset lo,
// offset hi} with key {seed lo, seed hi}. `stream` tells apart the sites that
// draw (each dropout node, each parameter), `offset` the step and microbatch.
inline uint32_t bits(uint64_t seed, uint32_t stream, uint64_t offset, uint64_t e) {
  Block c{static_cast<uint32_t>(e / 4), stream, static_cast<uint32_t>(offset),
          static_cast<uint32_t>(offset >> 32)};
  return philox4x32_10(c, {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)})[e % 4];
}

// A uniform in [0, 1) with 24 bits, exact in f32.
inline float uniform(uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1p-24f; }

// Dropout keeps an element when its uniform is >= p.
inline bool keep(uint64_t seed, uint32_t stream, uint64_t offset, uint64_t e, double p) {
  return uniform(bits(seed, stream, offset, e)) >= p;
}

// A standard normal for element e (Box-Muller on the two uniforms at 2e and
// 2e+1 in the stream; the first uniform is moved into (0, 1] for the log).
inline double normal(uint64_t seed, uint32_t stream, uint64_t offset, uint64_t e) {
  double u1 = 1.0 - uniform(bits(seed, stream, offset, 2 * e));
  double u2 = uniform(bits(seed, stream, offset, 2 * e + 1));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace sx::philox
