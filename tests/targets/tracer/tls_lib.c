/* A shared library with its own TLS block (dynamic TLS: it is dlopen()ed by tls_threads). */
__thread int lib_tls = 3;

int *lib_tls_addr(int value) {
    lib_tls = value;
    return &lib_tls;
}
