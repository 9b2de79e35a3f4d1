#pragma once
// Measured times over several axes (an operator's time by its token count; attention's by
// prefill chunk, decoding sequences and their KV), on a grid that need not be a full
// product: the values measured along one axis may differ with the values of the axes before
// it (LLMServingSim measures mixed batches only up to 128 decoding sequences; Vidur measures
// a prefill chunk's KV in multiples of the chunk). A lookup interpolates linearly along the
// first axis between the two measured values around the query, each evaluated on the
// remaining axes the same way, recursively. Beyond the largest measured value of an axis the
// last two points are extended linearly, up to kMaxExtrapolation times that value; a query
// further out is an error naming the table, the axis, the point and the measured range.
// Below the smallest measured value the smallest's time holds (the flat floor of small
// kernels); an axis measured at one value only is taken as constant along it.
#include <cstdint>
#include <string>
#include <vector>

namespace cosim {

class RaggedTable {
public:
    static constexpr double kMaxExtrapolation = 2.0;

    RaggedTable() = default;
    // `rows`: each the axes' values followed by the time; `axes` names them (errors).
    RaggedTable(std::string source, std::vector<std::string> axes, const std::vector<std::vector<double>>& rows);
    // The same from `count` rows laid out one after another (row-major, axes + 1 values
    // each), as a numpy array holds them: no copy of the rows is made.
    RaggedTable(std::string source, std::vector<std::string> axes, const double* rows, size_t count);

    // The time at `query` (one value per axis).
    double at(const std::vector<double>& query) const;
    // The largest measured value of the first axis.
    double max_first() const;
    bool empty() const { return nodes_.empty(); }
    const std::string& source() const { return source_; }

private:
    struct Node {
        std::vector<double> keys;
        std::vector<int64_t> next;  // child nodes; at the last axis, indexes into values_
    };
    // Rows by index into `rows` (row-major, width axes + 1), sorted by their axes.
    int64_t build(const double* rows, const std::vector<size_t>& order, size_t begin, size_t end, size_t axis);
    void build_all(const double* rows, size_t count);
    double eval(int64_t node, size_t axis, const std::vector<double>& query) const;
    [[noreturn]] void beyond(size_t axis, const std::vector<double>& query, double largest) const;

    std::string source_;
    std::vector<std::string> axes_;
    std::vector<Node> nodes_;
    std::vector<double> values_;
};

}  // namespace cosim
