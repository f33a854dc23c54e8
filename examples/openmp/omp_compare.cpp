// One expression across the OpenMP threads (`omp compare`, issue 20). OpenMP threads 0-3
// call work(), where each holds its own values; thread 4 stays outside work(). Every
// thread prints what it holds ("truth: compare ...", ground truth for the tests) before
// it arrives; OpenMP thread 0 stops on the LINE-MARK line once all others have arrived,
// threads 1-3 spinning in work(), thread 4 in the parallel region's own code.
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <vector>

#include "omp_common.h"

struct point {
    int x;
    double y;
};

/* One "truth: ..." line in one write(): threads print at once, and a line must not mix. */
__attribute__((format(printf, 1, 2))) static void truth(const char* fmt, ...) {
    char line[512];
    int n = snprintf(line, sizeof line, "truth: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    line[n++] = '\n';
    if (write(STDOUT_FILENO, line, (size_t)n) < 0) {
        /* the tests then miss a line and say so */
    }
}

static volatile int arrived;
static volatile int released;
int shared_total = 42;   // the same in every thread, wherever it stands

__attribute__((noinline)) void work(int me, int others) {
    int x = me == 2 ? 7 : 4;
    double resid = 0.25 + me * 1e-9;       // within 1e-6 of each other
    double far = me == 3 ? 0.5 : 0.25;     // thread 3 outside any small tolerance
    int arr[8];
    for (int i = 0; i < 8; ++i) {
        arr[i] = i * 10;
    }
    if (me == 1) {
        arr[5] = -1;
    }
    point pt{1, me == 2 ? 3.5 : 2.5};
    std::vector<int> v{1, 2, 3};
    if (me == 1) {
        v.reserve(16);   // another capacity, the same contents
    }
    if (me == 3) {
        v[2] = 9;
    }
    truth("compare thread=%d lwp=%ld x=%d resid=%.17g far=%.17g arr5=%d pt.y=%g v=%d,%d,%d cap=%zu", me,
          (long)syscall(SYS_gettid), x, resid, far, arr[5], pt.y, v[0], v[1], v[2], v.capacity());
    if (me == 0) {
        while (arrived < others) {
        }
        omp_checkpoint(x);   // LINE-MARK: compare_stop
        released = 1;
    } else {
        __atomic_fetch_add(&arrived, 1, __ATOMIC_RELEASE);
        while (!released) {
        }
    }
}

int main() {
    const int workers = 4;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(workers + 1)
    {
        int me = omp_get_thread_num();
        if (me < workers) {
            work(me, workers);
        } else {
            truth("compare thread=%d lwp=%ld outside", me, (long)syscall(SYS_gettid));
            __atomic_fetch_add(&arrived, 1, __ATOMIC_RELEASE);
            while (!released) {
            }
        }
    }
    truth("compare done total=%d", shared_total);
    return 0;
}
