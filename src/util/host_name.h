#pragma once
// This machine's name (gethostname), as run lines, records, locks and the
// TensorBoard file name show it; "" when it cannot be read.
#include <string>

namespace sx {
std::string host_name();
}  // namespace sx
