#include "backend/cuda/gpu.h"

#include <cstring>

#include "util/error.h"

namespace sx::cuda {

std::vector<uint64_t> scalar_words(const std::vector<Scalar>& scalars) {
  std::vector<uint64_t> words;
  for (const Scalar& s : scalars) {
    uint64_t w = 0;
    if (s.type == kir::ScalarType::u64) w = s.u;
    if (s.type == kir::ScalarType::f32) {
      const float f = static_cast<float>(s.f);
      std::memcpy(&w, &f, sizeof f);
    }
    if (s.type == kir::ScalarType::f64) std::memcpy(&w, &s.f, sizeof s.f);
    words.push_back(w);
  }
  return words;
}

std::vector<Scalar> scalars_of(const uint64_t* words, const std::vector<kir::ScalarParam>& params) {
  SX_ASSERT(words || params.empty(), "a kernel with scalars launched without their words");
  std::vector<Scalar> out;
  for (size_t i = 0; i < params.size(); ++i) {
    const uint64_t w = words[i];
    switch (params[i].type) {
      case kir::ScalarType::u64:
        out.push_back(Scalar::u64(w));
        break;
      case kir::ScalarType::f32: {
        float f;
        std::memcpy(&f, &w, sizeof f);
        out.push_back(Scalar::f32(f));
        break;
      }
      case kir::ScalarType::f64: {
        double d;
        std::memcpy(&d, &w, sizeof d);
        out.push_back(Scalar::f64(d));
        break;
      }
    }
  }
  return out;
}

}  // namespace sx::cuda
