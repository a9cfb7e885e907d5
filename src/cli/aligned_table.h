#pragma once

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace tributary::cli {

/// Prints rows (the first is the header) with each column as wide as its
/// widest cell, two spaces apart: text left-aligned, the columns `right`
/// marks right-aligned (numbers), the last column free. 19-digit numbers
/// never run into the next column.
inline void print_aligned(const std::vector<std::vector<std::string>>& table, const std::vector<bool>& right) {
    std::vector<std::size_t> width(right.size(), 0);
    for (const auto& row : table)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : table) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const bool last = i + 1 == row.size();
            const std::string pad(last ? 0 : width[i] - row[i].size(), ' ');
            line += right[i] ? pad + row[i] : row[i] + pad;
            if (!last) line += "  ";
        }
        std::cout << line << "\n";
    }
}

}  // namespace tributary::cli
