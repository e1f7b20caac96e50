#pragma once
// Text placed in XML or HTML: the S3 requests' XML bodies and `sexpgpu
// report`'s page share one escaping, so a value can never open a tag.
#include <string>
#include <string_view>

namespace sx {

// `s` with &, <, >, " and ' as entities (' as &#39;, which XML and HTML both read).
std::string escape_markup(std::string_view s);

}  // namespace sx
