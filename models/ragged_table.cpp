#include "ragged_table.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "errors.hpp"

namespace cosim {

RaggedTable::RaggedTable(std::string source, std::vector<std::string> axes,
                         const std::vector<std::vector<double>>& rows)
    : source_(std::move(source)), axes_(std::move(axes)) {
    if (axes_.empty()) throw ConfigError(source_ + ": a table needs at least one axis");
    std::vector<double> flat;
    flat.reserve(rows.size() * (axes_.size() + 1));
    for (const auto& row : rows) {
        if (row.size() != axes_.size() + 1) throw ConfigError(source_ + ": a point needs every axis and a time");
        flat.insert(flat.end(), row.begin(), row.end());
    }
    build_all(flat.data(), rows.size());
}

RaggedTable::RaggedTable(std::string source, std::vector<std::string> axes, const double* rows, size_t count)
    : source_(std::move(source)), axes_(std::move(axes)) {
    if (axes_.empty()) throw ConfigError(source_ + ": a table needs at least one axis");
    build_all(rows, count);
}

void RaggedTable::build_all(const double* rows, size_t count) {
    if (count == 0) throw ConfigError(source_ + ": no measured point");
    const size_t width = axes_.size() + 1;
    for (size_t i = 0; i < count * width; ++i)
        if (!std::isfinite(rows[i])) throw ConfigError(source_ + ": a measured point is not a finite number");
    // Sort indexes, not rows: a table of a million points is sorted without a copy of it.
    std::vector<size_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::lexicographical_compare(rows + a * width, rows + a * width + width, rows + b * width,
                                            rows + b * width + width);
    });
    build(rows, order, 0, count, 0);
}

int64_t RaggedTable::build(const double* rows, const std::vector<size_t>& order, size_t begin, size_t end,
                           size_t axis) {
    const size_t width = axes_.size() + 1;
    auto at = [&](size_t j, size_t a) { return rows[order[j] * width + a]; };
    const auto id = static_cast<int64_t>(nodes_.size());
    nodes_.emplace_back();
    size_t i = begin;
    while (i < end) {
        size_t j = i;
        while (j < end && at(j, axis) == at(i, axis)) ++j;
        const double key = at(i, axis);
        int64_t child;
        if (axis + 1 == axes_.size()) {
            if (j - i > 1) {
                std::ostringstream point;
                for (size_t a = 0; a < axes_.size(); ++a) point << (a ? ", " : "") << axes_[a] << " " << at(i, a);
                throw ConfigError(source_ + ": the point (" + point.str() + ") is measured twice");
            }
            child = static_cast<int64_t>(values_.size());
            values_.push_back(at(i, axes_.size()));
        } else {
            child = build(rows, order, i, j, axis + 1);
        }
        nodes_[static_cast<size_t>(id)].keys.push_back(key);
        nodes_[static_cast<size_t>(id)].next.push_back(child);
        i = j;
    }
    return id;
}

double RaggedTable::max_first() const { return nodes_.empty() ? 0.0 : nodes_.front().keys.back(); }

double RaggedTable::at(const std::vector<double>& query) const {
    if (query.size() != axes_.size()) throw SimulationError(source_ + ": internal: a query of the wrong size");
    const double value = eval(0, 0, query);
    // Measured times are > 0, and so is every point between them: only extending past the
    // last points can reach zero, which no forward pass takes.
    if (!(value > 0.0)) {
        std::ostringstream point;
        for (size_t a = 0; a < axes_.size(); ++a) point << (a ? ", " : "") << axes_[a] << " " << query[a];
        throw ConfigError(source_ + ": extending the measured points to (" + point.str() +
                          ") gives a time <= 0; the run needs a point the table does not cover");
    }
    return value;
}

void RaggedTable::beyond(size_t axis, const std::vector<double>& query, double largest) const {
    std::ostringstream out;
    out << source_ << ": the run needs " << axes_[axis] << " = " << query[axis];
    if (axis > 0) {
        out << " (at";
        for (size_t a = 0; a < axis; ++a) out << (a ? ", " : " ") << axes_[a] << " " << query[a];
        out << ")";
    }
    out << ", beyond the measured " << axes_[axis] << " up to " << largest << " by more than the " << kMaxExtrapolation
        << "x it may be extended; measure larger " << axes_[axis] << " or keep the run within it";
    throw ConfigError(out.str());
}

double RaggedTable::eval(int64_t node, size_t axis, const std::vector<double>& query) const {
    const Node& n = nodes_[static_cast<size_t>(node)];
    const bool leaf = axis + 1 == axes_.size();
    auto value = [&](size_t i) {
        return leaf ? values_[static_cast<size_t>(n.next[i])] : eval(n.next[i], axis + 1, query);
    };
    const double q = query[axis];
    const size_t m = n.keys.size();
    if (m == 1 || q <= n.keys.front()) return value(0);
    size_t lo;
    if (q >= n.keys.back()) {
        if (q == n.keys.back()) return value(m - 1);
        if (q > kMaxExtrapolation * n.keys.back()) beyond(axis, query, n.keys.back());
        lo = m - 2;
    } else {
        lo = static_cast<size_t>(std::upper_bound(n.keys.begin(), n.keys.end(), q) - n.keys.begin()) - 1;
        if (n.keys[lo] == q) return value(lo);
    }
    const double x0 = n.keys[lo], x1 = n.keys[lo + 1];
    const double t = (q - x0) / (x1 - x0);
    const double y0 = value(lo), y1 = value(lo + 1);
    return y0 + t * (y1 - y0);
}

}  // namespace cosim
