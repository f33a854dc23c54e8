/* The shared library of fast_shlib (issue 21): a function whose breakpoint site is in a
 * library mapped far (> 2 GB) from the executable, so its jump pad needs memory near the
 * library. */
/* For dprintf's %s of a char array (not a pointer). */
char step_tag[8] = "step";

__attribute__((noinline)) long lib_step(long i) {
    long r = i * 7 % 13;
    return r;
}
