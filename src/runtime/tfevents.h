#pragma once
// TensorBoard's event file format, written without TensorFlow: a file is a
// sequence of records (u64 length, masked CRC32C of the length, the data,
// masked CRC32C of the data), each record's data an `Event` protobuf
// (tensorboard/compat/proto/event.proto, summary.proto) encoded by hand.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sx::tfevents {

uint32_t crc32c(std::string_view data);
// TensorFlow's mask: CRCs of data that holds CRCs are themselves weak.
uint32_t masked_crc32c(std::string_view data);

// One record: the framing around `data`.
std::string record(std::string_view data);

// Event{wall_time, file_version}: the first record of every event file.
std::string file_version_event(double wall_time);
// Event{wall_time, step, summary{value{tag, simple_value}...}}.
std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& scalars);

}  // namespace sx::tfevents
