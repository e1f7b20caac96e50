#include "runtime/node_group_communicator.h"

#include <cstring>

#include "util/error.h"

namespace sx {

namespace {

class NodeGroupCommunicator final : public Communicator {
 public:
  NodeGroupCommunicator(std::unique_ptr<Communicator> local, Communicator& nodes)
      : local_(std::move(local)), nodes_(nodes), gpus_(local_->size()) {}
  int rank() const override { return nodes_.rank() * gpus_ + local_->rank(); }
  int size() const override { return nodes_.size() * gpus_; }

  void all_gather(const void* mine, size_t bytes, void* all) override {
    const size_t node_bytes = bytes * static_cast<size_t>(gpus_);
    char* out = static_cast<char*>(all);
    if (local_->rank() == 0) {
      std::vector<char> node(node_bytes);
      local_->all_gather(mine, bytes, node.data());
      nodes_.all_gather(node.data(), node_bytes, out);
    } else {
      local_->all_gather(mine, bytes, out + static_cast<size_t>(nodes_.rank()) * node_bytes);
    }
    local_->broadcast(all, node_bytes * static_cast<size_t>(nodes_.size()), 0);
  }
  void broadcast(void* data, size_t bytes, int root) override {
    const int root_node = root / gpus_;
    if (nodes_.rank() == root_node) local_->broadcast(data, bytes, root % gpus_);
    if (local_->rank() == 0) nodes_.broadcast(data, bytes, root_node);
    local_->broadcast(data, bytes, 0);
  }
  void barrier() override {
    local_->barrier();
    if (local_->rank() == 0) nodes_.barrier();
    local_->barrier();
  }
  // The node's other GPUs learn at once; the other nodes at their exchange's timeout.
  void abandon(std::exception_ptr why) override { local_->abandon(std::move(why)); }

 private:
  std::unique_ptr<Communicator> local_;
  Communicator& nodes_;
  const int gpus_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_node_group_communicators(
    std::vector<std::unique_ptr<Communicator>> local, Communicator& nodes) {
  SX_ASSERT(!local.empty(), "a node group of no GPU");
  std::vector<std::unique_ptr<Communicator>> out;
  for (auto& l : local) out.push_back(std::make_unique<NodeGroupCommunicator>(std::move(l), nodes));
  return out;
}

}  // namespace sx
