#pragma once
// The model's parameters and their gradients, by model path, as float32
// buffers that every graph of the run (the training step, each pass) shares.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/params.h"

namespace sx {

struct ParamStore {
  std::vector<ParamInfo> info;  // in model-path order
  std::map<std::string, std::vector<float>> values;
  int64_t count() const;  // the number of scalars
};

// Draws every parameter's initial values: Philox keyed by the run's seed, the
// stream a hash of the model path, so values do not depend on creation order.
// The values are the reference backend's (ref::init_param), bit for bit, for
// any `threads`.
ParamStore init_params(const std::vector<ParamInfo>& info, uint64_t seed, int threads = 1);
uint32_t path_stream(const std::string& path);

}  // namespace sx
