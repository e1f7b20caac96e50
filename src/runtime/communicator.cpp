#include "runtime/communicator.h"

#include <cstring>
#include <vector>

namespace sx {

namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_gather(const void* mine, size_t bytes, void* all) override {
    if (bytes) std::memcpy(all, mine, bytes);
  }
  void broadcast(void*, size_t, int) override {}
  void barrier() override {}
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

uint16_t to_bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16_bits(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

void Communicator::all_reduce_sum(float* data, size_t n, GradientPrecision wire) {
  const size_t ranks = static_cast<size_t>(size());
  if (wire == GradientPrecision::bf16) {
    std::vector<uint16_t> mine(n), all(n * ranks);
    for (size_t i = 0; i < n; ++i) mine[i] = to_bf16_bits(data[i]);
    all_gather(mine.data(), n * sizeof(uint16_t), all.data());
    for (size_t i = 0; i < n; ++i) {
      float s = 0.0f;
      for (size_t r = 0; r < ranks; ++r) s += from_bf16_bits(all[r * n + i]);
      data[i] = s;
    }
    return;
  }
  std::vector<float> all(n * ranks);
  all_gather(data, n * sizeof(float), all.data());
  for (size_t i = 0; i < n; ++i) {
    float s = 0.0f;
    for (size_t r = 0; r < ranks; ++r) s += all[r * n + i];
    data[i] = s;
  }
}

int Communicator::first_nonzero(int value) {
  std::vector<int32_t> all(static_cast<size_t>(size()));
  int32_t mine = value;
  all_gather(&mine, sizeof mine, all.data());
  for (int32_t v : all)
    if (v != 0) return v;
  return 0;
}

NodeSetup node_setup(const Environment& env) {
  NodeSetup s;
  s.rank = env.node_rank;
  s.nodes = env.nodes;
  if (env.rendezvous) s.rendezvous = *env.rendezvous;
  s.address = env.node_address;
  s.timeout_s = env.node_timeout_s;
  return s;
}

}  // namespace sx
