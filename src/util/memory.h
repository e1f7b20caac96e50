#pragma once
// How much memory a run may plan for: the machine's physical memory, or
// SEXPGPU_MEMORY when set (to try a shape against a smaller machine). Tensors
// and plans above it are refused before anything is allocated.
#include <cstddef>
#include <cstdint>
#include <string>

namespace sx {

// The machine's physical memory in bytes (UINT64_MAX when unknown).
uint64_t physical_memory();
// The budget in bytes, and how messages name it ("this machine's 125.71 GiB
// of memory", "SEXPGPU_MEMORY=8 GiB").
uint64_t memory_budget();
std::string memory_budget_text();
// From SEXPGPU_MEMORY (GiB); 0 goes back to the physical memory.
void set_memory_budget_gib(double gib);

// A huge page: what allocate_huge_pages aligns to and rounds up to.
constexpr size_t kHugePageBytes = size_t{2} << 20;

// At least `bytes` of memory, 2 MiB aligned and rounded up to 2 MiB, advised
// to the kernel as huge pages (madvise MADV_HUGEPAGE: Debian's transparent
// huge pages are "madvise", so memory not advised stays in 4 KiB pages);
// free it with std::free; nullptr when there is none. For the CPU backend's
// arena: its activations' rows are often 4 KiB or more apart, a page each,
// and a product's epilogue or packing touching a tile's rows walked the page
// tables for every one (2% of a medium step on a Zen 3).
void* allocate_huge_pages(size_t bytes);

// 1.50 GiB, 12.00 MiB, 3.0 KiB, 17 B; above 1 TiB in TiB.
std::string bytes_text(uint64_t bytes);

}  // namespace sx
