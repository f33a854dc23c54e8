#include <cstdio>

int main() {
    std::puts("ompdbg: skeleton");
    return 0;
}
