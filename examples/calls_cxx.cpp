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

int main() {
    counter c(5);
    counter* pc = &c;
    std::vector<int> v{10, 20, 30};
    std::map<int, int> m{{1, 2}, {3, 4}};
    std::set<int> s;
    std::string str = "hello";
    std::unique_ptr<int> up = std::make_unique<int>(42);
    std::printf("%d %d %zu %zu %d %zu %d\n", c.doubled(), pc->get(), v.size(), m.size(), s.empty() ? 1 : 0,
                str.size(), *up);   // LINE-MARK: cxx-calls-ready
    return geo::area(2, 3) == 6 ? 0 : 1;
}
