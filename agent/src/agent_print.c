/* dprintf lines formatted in the program (issue 21): a site whose action is
 * OMPDBG_ACTION_PRINT formats its line from the format program and argument bytecode of
 * its record into the ring `ompdbg_agent_ring`, which the debugger drains. Only what the
 * debugger's own printf would print the same way is ever given to the agent (agent_abi.h
 * lists the conversions); anything the agent cannot finish (a string it cannot read or
 * that does not fit, a full ring) stops for the debugger, which prints that line itself. */

#include "agent_internal.h"

AGENT_EXPORT struct ompdbg_agent_ring ompdbg_agent_ring;

struct line {
    uint32_t len;
    char text[OMPDBG_AGENT_LINE_BYTES];
};

static int put_char(struct line* l, char c) {
    if (l->len >= OMPDBG_AGENT_LINE_BYTES) {
        return 0;
    }
    l->text[l->len++] = c;
    return 1;
}

static int put_text(struct line* l, const char* s) {
    while (*s != '\0') {
        if (!put_char(l, *s++)) {
            return 0;
        }
    }
    return 1;
}

static int put_unsigned(struct line* l, uint64_t v, unsigned base) {
    char digits[24];
    unsigned n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v != 0);
    while (n > 0) {
        if (!put_char(l, digits[--n])) {
            return 0;
        }
    }
    return 1;
}

static int put_signed(struct line* l, int64_t v) {
    if (v < 0) {
        if (!put_char(l, '-')) {
            return 0;
        }
        return put_unsigned(l, (uint64_t)0 - (uint64_t)v, 10);
    }
    return put_unsigned(l, (uint64_t)v, 10);
}

/* The C string at `addr`, read a page piece at a time through process_vm_readv: an
 * unreadable byte, or a string longer than the line, leaves it to the debugger. */
static int put_string(struct line* l, uint64_t addr) {
    if (addr == 0) {
        return put_text(l, "(null)");
    }
    for (;;) {
        char chunk[32];
        unsigned n = 4096u - (unsigned)(addr & 4095u);
        n = n < sizeof chunk ? n : (unsigned)sizeof chunk;
        if (!ompdbg_agent_read(chunk, addr, n)) {
            return 0;
        }
        for (unsigned i = 0; i < n; ++i) {
            if (chunk[i] == '\0') {
                return 1;
            }
            if (!put_char(l, chunk[i])) {
                return 0;
            }
        }
        addr += n;
    }
}

/* Formats the site's line into `l`; 0 when the debugger must print it. Every argument is
 * evaluated first, as the debugger's printf does (an error prints nothing of the line). */
static int format_line(const struct ompdbg_agent_site* site, const uint64_t* regs, struct line* l) {
    uint64_t values[OMPDBG_AGENT_MAX_ARGS];
    uint32_t nargs = site->nargs;
    if (nargs > OMPDBG_AGENT_MAX_ARGS || site->format_len > OMPDBG_AGENT_FORMAT_BYTES) {
        return 0;
    }
    for (uint32_t i = 0; i < nargs; ++i) {
        uint32_t at = site->arg_at[i], len = site->arg_len[i];
        if (at + len > OMPDBG_AGENT_SITE_CODE_BYTES || ompdbg_agent_exec(site->code + at, len, regs, &values[i]) != 0) {
            return 0;
        }
    }
    uint32_t next = 0;
    for (uint32_t i = 0; i < site->format_len; ++i) {
        char c = site->format[i];
        if (c != '%') {
            if (!put_char(l, c)) {
                return 0;
            }
            continue;
        }
        if (++i >= site->format_len) {
            return 0;
        }
        char conv = site->format[i];
        if (conv == '%') {
            if (!put_char(l, '%')) {
                return 0;
            }
            continue;
        }
        if (next >= nargs) {
            return 0;
        }
        uint64_t v = values[next++];
        int ok;
        switch (conv) {
        case 'd': ok = put_signed(l, (int32_t)(uint32_t)v); break;
        case 'u': ok = put_unsigned(l, (uint32_t)v, 10); break;
        case 'x': ok = put_unsigned(l, (uint32_t)v, 16); break;
        case 'D': ok = put_signed(l, (int64_t)v); break;
        case 'U': ok = put_unsigned(l, v, 10); break;
        case 'X': ok = put_unsigned(l, v, 16); break;
        case 'c': ok = put_char(l, (char)(unsigned char)v); break;
        case 's': ok = put_string(l, v); break;
        case 'p': ok = v == 0 ? put_text(l, "(nil)") : (put_text(l, "0x") && put_unsigned(l, v, 16)); break;
        default: ok = 0; break;
        }
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

/* Appends `l` to the ring: a slot is reserved by a compare-and-swap on `head` while the
 * ring has room, filled, then published by its `seq`. 0 when the ring is full. */
static int ring_put(const struct line* l) {
    struct ompdbg_agent_ring* r = &ompdbg_agent_ring;
    uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
        if (h - t >= OMPDBG_AGENT_RING_LINES) {
            __atomic_fetch_add(&r->full, 1, __ATOMIC_RELAXED);
            return 0;
        }
        if (__atomic_compare_exchange_n(&r->head, &h, h + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            break;
        }
    }
    struct ompdbg_agent_line* slot = &r->lines[h % OMPDBG_AGENT_RING_LINES];
    for (uint32_t i = 0; i < l->len; ++i) {
        slot->text[i] = l->text[i];
    }
    slot->len = l->len;
    __atomic_store_n(&slot->seq, h + 1, __ATOMIC_RELEASE);
    return 1;
}

int ompdbg_agent_print(const struct ompdbg_agent_site* site, const uint64_t* regs) {
    struct line l;
    l.len = 0;
    return format_line(site, regs, &l) && ring_put(&l);
}
