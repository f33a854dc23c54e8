// overload_threads: two named threads, one after the other, each calling one overload of
// tally (`tally(int)` in "tally-int", then `tally(double)` in "tally-double"): a breakpoint
// on `tally` has two locations, each hit by a thread of its own, for the
// "Thread N "name" hit Breakpoint 1.2, " report. Deterministic: the second thread starts
// after the first has been joined. Prints "tally 7 2.50".
#include <pthread.h>

#include <cstdio>

namespace counting {

int tally(int n) {
    return n + 1; // LINE-MARK: tally_int
}

double tally(double x) {
    return x * 2.0; // LINE-MARK: tally_double
}

}  // namespace counting

namespace {

int int_result;
double double_result;

void* int_thread(void*) {
    pthread_setname_np(pthread_self(), "tally-int");
    int_result = counting::tally(6);
    return nullptr;
}

void* double_thread(void*) {
    pthread_setname_np(pthread_self(), "tally-double");
    double_result = counting::tally(1.25);
    return nullptr;
}

}  // namespace

int main() {
    pthread_t t;
    pthread_create(&t, nullptr, int_thread, nullptr);
    pthread_join(t, nullptr);
    pthread_create(&t, nullptr, double_thread, nullptr);
    pthread_join(t, nullptr);
    std::printf("tally %d %.2f\n", int_result, double_result);
    return 0;
}
