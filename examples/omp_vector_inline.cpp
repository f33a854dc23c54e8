// A C++ OpenMP loop built with g++ -O2 -fopenmp (issue 17, item 10): accessors of a header
// and std::vector's operator[] are inlined in the body of a `#pragma omp parallel for`, so
// rows of the body's lines share their addresses with rows of those headers. A breakpoint
// on a body line names this file and the address gdb picks.
#include <cstdio>

#include "omp_vector_inline.hpp"

static double relax(mesh& m, int n) {
    double sum = 0.0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < n; ++i) {
        int k = m.node(i);                  // LINE-MARK: body_node
        m.y(k) = m.x(k) * 0.5 + m.y(i);     // LINE-MARK: body_update
        sum += m.y(k);                      // LINE-MARK: body_sum
    }
    return sum;
}

int main(int argc, char**) {
    mesh m;
    m.m_x.assign(64, 1.0 + argc);
    m.m_y.assign(64, 2.0);
    m.m_nodes.resize(64);
    for (int i = 0; i < 64; ++i) {
        m.m_nodes[i] = (i * 7) % 64;
    }
    std::printf("sum %.1f\n", relax(m, 64));
    return 0;
}
