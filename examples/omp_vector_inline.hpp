// The accessors of omp_vector_inline.cpp, in a header as in LULESH (Domain::x(i) returns
// m_x[i]): inlined at -O2, their rows share addresses with the rows of the loop body.
#pragma once
#include <vector>

struct mesh {
    std::vector<double> m_x, m_y;
    std::vector<int> m_nodes;
    double& x(int i) { return m_x[i]; }
    double& y(int i) { return m_y[i]; }
    int node(int i) { return m_nodes[i]; }
};
