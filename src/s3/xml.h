#pragma once
// Just enough XML for S3's answers (ListObjectsV2, multipart uploads, errors):
// the elements of one name, their text with entities decoded. Tolerates an XML
// declaration, namespaces and attributes, comments, CDATA and whitespace;
// never reads out of bounds on any input.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sx::s3::xml {

// The contents of every element named `tag` (not nested in another one of the
// same name), in document order: "<Key>a</Key><Key>b</Key>" -> {"a", "b"}.
std::vector<std::string_view> elements(std::string_view doc, std::string_view tag);

// The decoded text of the first element `tag`, or nullopt.
std::optional<std::string> text(std::string_view doc, std::string_view tag);

// Entities (&amp; &lt; &gt; &quot; &apos; &#N; &#xN;) and CDATA sections decoded.
std::string decode(std::string_view s);


}  // namespace sx::s3::xml
