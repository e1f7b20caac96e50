#pragma once
// The report as one self-contained HTML page (docs/report.md): the style, the
// charts and the little script that sorts a table are all inline, so the file
// opens anywhere with no network. The same report gives the same bytes: the
// page carries no time of its own.
#include <string>

#include "cli/report_model.h"

namespace sx::report {

std::string html_page(const Report& r);

// The parts of the page, each a whole element.
std::string finals_table(const Report& r);
std::string runs_section(const Report& r);
std::string knobs_table(const Report& r);

}  // namespace sx::report
