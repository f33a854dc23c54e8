// C++ functions for the debugger to call: overloads, member functions through an object,
// a pointer and `this`, static members, a namespace, and std containers whose common
// methods the debugger answers without running code.
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace geo {
int area(int w, int h) { return w * h; }
}

int twice(int x) { return 2 * x; }
double twice(double x) { return 2 * x; }

class counter {
public:
    explicit counter(int start) : value_(start) {}
    int get() const { return value_; }
    int add(int n) { value_ += n; return value_; }
    static int limit() { return 100; }
    int doubled() const { return twice(get()); }   // LINE-MARK: cxx-member
private:
    int value_;
};

// Wider scalars: long double goes in memory and comes back in st(0); __int128 in two
// integer registers (rdi:rsi ... rax:rdx).
long double ld_scale(long double x, int k) { return x * k; }
__int128 wide_add(__int128 a, __int128 b) { return a + b; }
unsigned __int128 wide_shift(int n) { return static_cast<unsigned __int128>(1) << n; }
long high_half(__int128 x) { return static_cast<long>(x >> 64); }

// A class with a user-provided copy constructor and destructor: passed by invisible
// reference to a copy the caller makes (and destroys), returned through a hidden pointer
// however small (Itanium C++ ABI 3.1.2).
int destroyed = 0;
struct tracked {
    explicit tracked(int x) : v(x) {}
    tracked(const tracked& o) : v(o.v + 1000) {}
    ~tracked() { ++destroyed; }
    int v;
};
int take_tracked(tracked t) { return t.v; }
tracked make_tracked(int x) { return tracked(x); }

// A method found in a base class, through a derived object.
struct base {
    int id() const { return 7 + b_; }
    int b_ = 3;
};
struct derived : base {
    int own() const { return id() + d_; }
    int d_ = 1;
};

int main() {
    tracked tr(4);
    derived d;
    long double ld = 1.5L;
    __int128 wide = static_cast<__int128>(1) << 70;
    counter c(5);
    counter* pc = &c;
    std::vector<int> v{10, 20, 30};
    std::map<int, int> m{{1, 2}, {3, 4}};
    std::set<int> s;
    std::string str = "hello";
    std::unique_ptr<int> up = std::make_unique<int>(42);
    std::printf("%d %d %zu %zu %d %zu %d\n", c.doubled(), pc->get(), v.size(), m.size(), s.empty() ? 1 : 0,
                str.size(), *up);   // LINE-MARK: cxx-calls-ready
    std::printf("%d %d %d\n", d.own(), static_cast<int>(ld_scale(ld, 2)), static_cast<int>(wide_add(wide, 1) & 1));
    return geo::area(2, 3) == 6 && wide_shift(1) == 2 && high_half(wide) == 64 && take_tracked(tr) == 1004 &&
                   make_tracked(1).v == 1
               ? 0
               : 1;
}
