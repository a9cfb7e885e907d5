#include "cookbook_lines.h"

#include <fstream>
#include <stdexcept>

namespace tributary::testing {

std::vector<std::string> shell_words(const std::string& line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '"' || c == '\'') {
            const auto end = line.find(c, i + 1);
            if (end == std::string::npos) throw std::runtime_error("unbalanced quote in: " + line);
            word += line.substr(i + 1, end - i - 1);
            in_word = true;
            i = end;
        } else if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(word);
    return words;
}

std::vector<std::string> cookbook_source_add_commands() {
    const std::string path = std::string(TRIBUTARY_SOURCE_DIR) + "/docs/cookbook.md";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::vector<std::string> commands;
    std::string line, command;
    bool continuing = false;
    while (std::getline(in, line)) {
        if (!continuing && line.rfind("tributary source add", 0) != 0) continue;
        const bool continues = !line.empty() && line.back() == '\\';
        command += continues ? line.substr(0, line.size() - 1) : line;
        continuing = continues;
        if (!continuing) {
            commands.push_back(command);
            command.clear();
        }
    }
    return commands;
}

}  // namespace tributary::testing
