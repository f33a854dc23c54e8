#pragma once
/// state_slots: the state that parts of the model keep about one owner (a session, an
/// inferior), one object per type, created on first use and destroyed with the owner.
///
/// The OpenMP, DMPL, message-queue and fast-breakpoint code each keep a struct of their own
/// here (`inferior::model_state` for what belongs to one process, `session::model_state()`
/// for settings and loaded plugins), so that the owner needs to know none of them.

#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

namespace ompdbg::debugger {

class state_slots {
public:
    state_slots() = default;
    state_slots(const state_slots&) = delete;
    state_slots& operator=(const state_slots&) = delete;
    ~state_slots() { clear(); }

    /// The owner's T, default-constructed on first use; the reference stays valid until
    /// clear() or the owner's end.
    template <class T>
    T& get() {
        if (T* found = find<T>()) {
            return *found;
        }
        auto made = std::make_unique<holder<T>>();
        T& value = made->value;
        slots_.emplace_back(std::type_index(typeid(T)), std::move(made));
        return value;
    }

    /// The owner's T, or nullptr when none was made.
    template <class T>
    T* find() {
        for (auto& [type, slot] : slots_) {
            if (type == std::type_index(typeid(T))) {
                return &static_cast<holder<T>&>(*slot).value;
            }
        }
        return nullptr;
    }

    /// Destroys every object, the newest first (one made while another was in use goes
    /// before it).
    void clear() {
        while (!slots_.empty()) {
            slots_.pop_back();
        }
    }

private:
    struct slot {
        virtual ~slot() = default;
    };
    template <class T>
    struct holder final : slot {
        T value{};
    };
    std::vector<std::pair<std::type_index, std::unique_ptr<slot>>> slots_;
};

}  // namespace ompdbg::debugger
