// A C++ class-type threadprivate object: clang registers it with the runtime
// (__kmpc_threadprivate_register: constructor, copy constructor, destructor) and each thread
// reaches its copy through libomp's threadprivate cache; gcc makes it a thread_local.
#include <omp.h>
#include <cstdio>

class counter {
public:
    counter() : hits_(0), owner_(-1) {}
    void hit(int who) { ++hits_; owner_ = who; }
    int hits() const { return hits_; }
private:
    int hits_;
    int owner_;
};

counter tally;
#pragma omp threadprivate(tally)

void record(int i) {
    tally.hit(omp_get_thread_num());
    std::printf("id=%d, i=%d, hits=%d\n", omp_get_thread_num(), i, tally.hits());
    std::fflush(stdout);
    return;  // LINE-MARK: tp-class-return
}

int main() {
    omp_set_num_threads(4);
    omp_set_dynamic(0);
#pragma omp parallel for
    for (int i = 0; i < 8; i++) {
        record(i);
    }
    return 0;
}
