#pragma once
// The one table of the keys each declaration takes: name, type, default and
// meaning. The evaluator refuses any other key with it (E-DEF-001), and
// `sexpgpu help --keys` prints it for the test that checks docs/language.md.
#include <string>
#include <string_view>
#include <vector>

namespace sx {

struct DeclKey {
  const char* name;     // without the colon: "seq-len"
  const char* type;     // "integer >= 1", "a loader", ...
  const char* dflt;     // "required", "1", "none", ...
  const char* meaning;  // one line
};

struct DeclForm {
  const char* form;           // "defrun", "stage"
  const char* syntax;         // "(defrun NAME :key value ...)"
  const char* what;           // one line: what it declares, and what its free keys are
  std::vector<DeclKey> keys;  // empty for forms whose keys are knob names (defvariant, defsweep)
};

// Every declaration form, in the order docs/language.md lists them.
const std::vector<DeclForm>& declaration_forms();

// The keys of `form` ("defrun", "defeval", "defloader", "defknob", "stage").
std::vector<std::string> declaration_keys(std::string_view form);

// The table as text, one line per form and per key, tab-separated:
// "form\tNAME\tSYNTAX\tWHAT" then "key\tNAME\tTYPE\tDEFAULT\tMEANING".
std::string declaration_keys_dump();

}  // namespace sx
