// cxx_std: the libstdc++ types users print most (string, vector, list, map, set,
// unordered_map, unique_ptr, shared_ptr/weak_ptr, optional), nested aggregates for
// `set print pretty`, and a class with a virtual method (vtable pointers, C++ symbol
// names in pointer values). Prints what it holds so tests can compare. Deterministic.
// Keep line numbers stable: tests break on the LINE-MARK lines.
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

struct point {
    int x, y;
};
struct named {
    int id;
    char tag[8];
};
struct outer {
    int x;
    named in;
    int arr[3];
    named two[2];
    const char* text;
};
struct base {
    int id;
};
struct derived : base {
    double r;
};

class shape {
public:
    virtual ~shape() = default;
    virtual double area() const = 0;
    long id = 7;   // no padding after it: `x/2a this` reads only defined bytes
};

class circle : public shape {
public:
    double r = 2.5;
    double area() const override {
        return 3.0 * r * r; // LINE-MARK: circle_area
    }
};

template <typename T>
T twice(T v) {
    return v + v;
}

int main(int argc, char** argv) {
    std::string empty;
    std::string word = "hello world";
    std::string longer(40, 'z');
    std::vector<int> ints = {1, 2, 3};
    std::vector<int> zeros(30, 0);
    std::vector<std::string> words = {"alpha", "beta"};
    std::vector<point> points = {{1, 2}, {3, 4}};
    std::vector<double> none;
    std::map<std::string, int> ages = {{"ann", 31}, {"bob", 42}};
    std::map<int, std::vector<int>> nested = {{1, {7, 8}}};
    std::map<int, named> by_id = {{1, {5, "m"}}};
    std::set<int> primes = {2, 3, 5, 7};
    std::list<int> queue = {9, 8, 7};
    std::list<int> no_queue;
    std::unique_ptr<point> owned(new point{5, 6});
    std::unique_ptr<int> nothing;
    std::shared_ptr<int> shared = std::make_shared<int>(argc + 41);
    std::shared_ptr<int> shared2 = shared;
    std::weak_ptr<int> weak = shared;
    std::shared_ptr<int> no_share;
    std::optional<int> maybe = 5;
    std::optional<int> nope;
    std::unordered_map<int, int> squares = {{2, 4}};
    outer o = {1, {2, "hi"}, {4, 5, 6}, {{7, "a"}, {8, "b"}}, "text"};
    derived d;
    d.id = 3;
    d.r = 1.5;
    circle c;
    shape* sp = &c;
    int t = twice(argc + 20);
    std::printf("word=%s ints=%zu words=%s,%s ages=%d,%d primes=%zu queue=%d owned=%d,%d shared=%d use=%ld "
                "maybe=%d nope=%d squares=%d area=%.2f t=%d o=%d d=%d\n",
                word.c_str(), ints.size(), words[0].c_str(), words[1].c_str(), ages["ann"], ages["bob"],
                primes.size(), queue.front(), owned->x, owned->y, *shared, shared.use_count(), maybe.value_or(0),
                nope.value_or(-1), squares[2], sp->area(), t, o.x, d.id);
    std::printf("sizes %zu %zu %zu %zu %zu %zu %zu %zu %ld %d %zu %zu\n", empty.size(), longer.size(), zeros.size(),
                points.size(), none.size(), nested.size(), by_id.size(), no_queue.size(), weak.use_count(),
                nothing ? 1 : 0, no_share ? std::size_t{1} : std::size_t{0}, std::strlen(argv[0]) > 0 ? std::size_t{1} : std::size_t{0});
    return 0; // LINE-MARK: cxx_std_return
}
