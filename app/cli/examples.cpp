// add_examples (commands.h).
#include <string>

#include "app/cli/commands.h"

namespace sixstep::cli {

void add_examples(CLI::App* sub, std::initializer_list<const char*> lines) {
    std::string footer = sub->get_footer();
    if (!footer.empty()) footer += "\n\n";
    footer += "Examples:";
    for (const char* line : lines) footer += std::string("\n  ") + line;
    sub->footer(footer);
}

}  // namespace sixstep::cli
