#pragma once
// Nodes of several GPUs each (device_group.h): one Communicator over every GPU
// of every node, GPU g of node n being rank n x G + g of N x G, in the order
// of one process of N x G GPUs. The GPUs of a node meet in memory (an
// in-process communicator); their node's first GPU alone, on the thread that
// also drives the node's exchange, crosses to the other nodes over the nodes'
// communicator (Gloo), so a collective is: the node's GPUs gather to each
// other, the first GPU gathers the nodes' blocks, then hands the whole to the
// node's other GPUs. Sums stay the base class's rank-order sum of every GPU's
// term: N nodes of G GPUs add what one GPU of N x G microbatches adds, in its
// order. Emulated GPUs exchange so; real ones over one NCCL communicator
// (nccl_communicator.h).
#include <memory>
#include <vector>

#include "runtime/communicator.h"

namespace sx {

// `local`: this node's GPUs' in-process communicators, rank g at index g;
// `nodes` (this node's rank among the nodes) must outlive them.
std::vector<std::unique_ptr<Communicator>> make_node_group_communicators(
    std::vector<std::unique_ptr<Communicator>> local, Communicator& nodes);

}  // namespace sx
