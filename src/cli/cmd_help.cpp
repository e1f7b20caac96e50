// sexpgpu help [command|code]
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace sx {

namespace {

void list_commands() {
  std::cout << "usage: sexpgpu <command> ...\n\ncommands:\n";
  for (const auto& c : commands())
    std::cout << fmt::format("  {:<8} {}{}\n", c.name, c.summary, c.run ? "" : " (not in this build yet)");
  std::cout << "\nsexpgpu help <command> shows its flags; sexpgpu help <E-CODE> explains an error.\n"
               "sexpgpu --version prints the version.\n";
}

void describe(const Command& c) {
  std::cout << fmt::format("usage: sexpgpu {}\n\n{}.\n", c.usage, c.summary);
  if (!c.run) std::cout << "\nNot part of this build yet.\n";
  if (c.flags.empty()) return;
  std::cout << "\nflags:\n";
  for (const auto& f : c.flags) {
    std::string left = f.value.empty() ? f.name : f.name + " " + f.value;
    std::cout << fmt::format("  {:<22} {}\n", left, f.help);
  }
}

}  // namespace

ExitStatus cmd_help(const ParsedArgs& args) {
  if (args.positional.empty()) {
    list_commands();
    return ExitStatus::done;
  }
  const std::string& topic = args.positional[0];
  if (const Command* c = find_command(topic)) {
    describe(*c);
    return ExitStatus::done;
  }
  if (const CodeInfo* info = find_code(topic)) {
    std::cout << fmt::format("{}: {}\n\n{}\n", info->name, info->title, info->text);
    return ExitStatus::done;
  }
  std::vector<std::string> topics;
  for (const auto& c : commands()) topics.push_back(c.name);
  for (const auto& c : all_codes()) topics.push_back(c.name);
  UserError e(Code::CLI_003, {},
              fmt::format("`{}` is neither a command nor an error code", topic));
  e.first().help = did_you_mean(topic, topics);
  if (e.first().help.empty()) e.first().help = "sexpgpu help lists the commands; codes look like E-EVAL-041";
  throw e;
}

}  // namespace sx
