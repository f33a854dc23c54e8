// A C++ class-type threadprivate object. With clang it has a constructor, so clang registers
// it with the runtime (__kmpc_threadprivate_register) and, with -fnoopenmp-use-tls, each
// thread reaches its copy through libomp's threadprivate cache (with TLS it becomes a
// thread_local with a TLS init function). gcc 12 refuses a threadprivate object of a class
// with any constructor ("declared 'threadprivate' after first use"), so for gcc the class is
// trivially constructible (zero-initialised) and gcc makes it native TLS.
#include <omp.h>
#include <cstdio>

class counter {
public:
#if defined(__clang__)
    counter() : hits_(0), owner_(-1) {}
#endif
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
#pragma omp parallel for  // LINE-MARK: tp-class-pragma
    for (int i = 0; i < 8; i++) {
        record(i);
    }
    return 0;  // LINE-MARK: tp-class-end
}
