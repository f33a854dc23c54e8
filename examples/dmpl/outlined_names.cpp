// Outlined-routine names for the demangler tests: regions in a member function, a template,
// nested regions, a task, sections, in C++ (mangled parents) with gcc and clang.
#include <omp.h>
#include <cstdio>
namespace ns { struct K { int v = 1; void work(); }; }
void ns::K::work() {
  #pragma omp parallel
  { v += 0; }
}
template <typename T> T tsum(T x) {
  T s = 0;
  #pragma omp parallel for reduction(+:s)
  for (int i = 0; i < 4; i++) s += x;
  return s;
}
int main() {
  int a = 0;
  #pragma omp parallel
  {
    #pragma omp single
    {
      #pragma omp task
      { a++; }
    }
    #pragma omp parallel num_threads(2)
    { a += 0; }
  }
  #pragma omp parallel sections
  {
    #pragma omp section
    { a++; }
  }
  ns::K k; k.work();
  std::printf("%d %d\n", a, tsum(3));
}
