/* watched_many: more watched values than x86 has debug registers (w1 to w5), and a struct
 * of 64 bytes (big), for watchpoints on a process of another host. Prints what it wrote. */
#include <stdio.h>

struct big_t {
    long v[8];
};
long w1, w2, w3, w4, w5;
struct big_t big;

int main(void) {
    w1 = 1; /* LINE-MARK: w1 */
    w2 = 2;
    w3 = 3;
    w4 = 4;
    w5 = 5;
    big.v[6] = 6; /* LINE-MARK: big */
    w1 = 11;
    w5 = 55;
    big.v[0] = 1; /* LINE-MARK: big_again */
    printf("w %ld %ld %ld %ld %ld big %ld %ld\n", w1, w2, w3, w4, w5, big.v[6], big.v[0]); /* LINE-MARK: print */
    return 0;
}
