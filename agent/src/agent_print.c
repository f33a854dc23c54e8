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

/* One conversion's flags, width and precision (C's printf: "%-+ #0W.P"). */
struct spec {
    int left, plus, space, alt, zero;
    unsigned width;
    int precision; /* -1: none */
};

static int put_fill(struct line* l, char c, unsigned n) {
    while (n-- > 0) {
        if (!put_char(l, c)) {
            return 0;
        }
    }
    return 1;
}

/* `len` bytes of `text` padded to the width, on the left unless '-' says right. */
static int put_padded(struct line* l, const struct spec* sp, const char* text, unsigned len) {
    unsigned pad = sp->width > len ? sp->width - len : 0;
    if (!sp->left && !put_fill(l, ' ', pad)) {
        return 0;
    }
    for (unsigned i = 0; i < len; ++i) {
        if (!put_char(l, text[i])) {
            return 0;
        }
    }
    return sp->left ? put_fill(l, ' ', pad) : 1;
}

/* An integer conversion as C's printf makes it: sign or "0x" prefix, at least `precision`
 * digits (none for a zero with precision 0), '0' padding after the prefix when there is
 * no precision and no '-', else spaces. */
static int put_integer(struct line* l, const struct spec* sp, uint64_t magnitude, int negative, int is_signed,
                       unsigned base, int upper) {
    char digits[24];
    unsigned n = 0;
    const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    for (uint64_t v = magnitude; v != 0; v /= base) {
        digits[n++] = set[v % base];
    }
    unsigned precision = sp->precision < 0 ? 1u : (unsigned)sp->precision;
    if (base == 8 && sp->alt && precision <= n) {
        precision = n + 1; /* '#': the first digit is a 0 */
    }
    unsigned zeros = precision > n ? precision - n : 0;
    char prefix[2];
    unsigned prefix_len = 0;
    if (is_signed && (negative || sp->plus || sp->space)) {
        prefix[prefix_len++] = negative ? '-' : sp->plus ? '+' : ' ';
    } else if (base == 16 && sp->alt && magnitude != 0) {
        prefix[prefix_len++] = '0';
        prefix[prefix_len++] = upper ? 'X' : 'x';
    }
    unsigned len = prefix_len + zeros + n;
    unsigned pad = sp->width > len ? sp->width - len : 0;
    if (sp->zero && !sp->left && sp->precision < 0) {
        zeros += pad;
        pad = 0;
    }
    if (!sp->left && !put_fill(l, ' ', pad)) {
        return 0;
    }
    for (unsigned i = 0; i < prefix_len; ++i) {
        if (!put_char(l, prefix[i])) {
            return 0;
        }
    }
    if (!put_fill(l, '0', zeros)) {
        return 0;
    }
    while (n > 0) {
        if (!put_char(l, digits[--n])) {
            return 0;
        }
    }
    return sp->left ? put_fill(l, ' ', pad) : 1;
}

static int put_signed(struct line* l, const struct spec* sp, int64_t v) {
    uint64_t magnitude = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return put_integer(l, sp, magnitude, v < 0, 1, 10, 0);
}

/* The C string at `addr` (at most `precision` bytes of it), read a page piece at a time
 * through process_vm_readv, padded to the width: an unreadable byte, or a string longer
 * than the line, leaves it to the debugger. NULL is "(null)", cut to the precision too,
 * as the debugger's printf passes it. */
static int put_string(struct line* l, const struct spec* sp, uint64_t addr) {
    char text[OMPDBG_AGENT_LINE_BYTES];
    /* A precision that fits cuts the string there; else reaching the end of `text` means
     * the string is longer than a line. */
    const int cut = sp->precision >= 0 && (unsigned)sp->precision <= sizeof text;
    unsigned len = 0, limit = cut ? (unsigned)sp->precision : (unsigned)sizeof text;
    if (addr == 0) {
        const char* null_text = "(null)";
        while (len < limit && null_text[len] != '\0') {
            text[len] = null_text[len];
            ++len;
        }
        return put_padded(l, sp, text, len);
    }
    while (len < limit) {
        char chunk[32];
        unsigned n = 4096u - (unsigned)(addr & 4095u);
        n = n < sizeof chunk ? n : (unsigned)sizeof chunk;
        if (!ompdbg_agent_read(chunk, addr, n)) {
            return 0;
        }
        for (unsigned i = 0; i < n; ++i) {
            if (chunk[i] == '\0') {
                return put_padded(l, sp, text, len);
            }
            if (len == limit) {
                break;
            }
            text[len++] = chunk[i];
        }
        addr += n;
    }
    return cut ? put_padded(l, sp, text, len) : 0; /* cut at the precision, or longer than a line */
}

/* Reads "flags width .precision" after a '%' of the format program; 0 when malformed. */
static int read_spec(const char* format, uint32_t size, uint32_t* i, struct spec* sp) {
    sp->left = sp->plus = sp->space = sp->alt = sp->zero = 0;
    sp->width = 0;
    sp->precision = -1;
    for (; *i < size; ++*i) {
        char c = format[*i];
        if (c == '-') sp->left = 1;
        else if (c == '+') sp->plus = 1;
        else if (c == ' ') sp->space = 1;
        else if (c == '#') sp->alt = 1;
        else if (c == '0') sp->zero = 1;
        else break;
    }
    for (; *i < size && format[*i] >= '0' && format[*i] <= '9'; ++*i) {
        sp->width = sp->width * 10 + (unsigned)(format[*i] - '0');
        if (sp->width > OMPDBG_AGENT_LINE_BYTES) {
            return 0;
        }
    }
    if (*i < size && format[*i] == '.') {
        sp->precision = 0;
        for (++*i; *i < size && format[*i] >= '0' && format[*i] <= '9'; ++*i) {
            sp->precision = sp->precision * 10 + (format[*i] - '0');
            if (sp->precision > (int)OMPDBG_AGENT_LINE_BYTES) {
                return 0;
            }
        }
    }
    return *i < size;
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
        if (site->format[i] == '%') {
            if (!put_char(l, '%')) {
                return 0;
            }
            continue;
        }
        struct spec sp;
        if (next >= nargs || !read_spec(site->format, site->format_len, &i, &sp)) {
            return 0;
        }
        /* The operand's width: 'L' 64 bits, 'h' 16, else 32 (agent_abi.h). */
        char size = site->format[i];
        if (size == 'L' || size == 'h') {
            if (++i >= site->format_len) {
                return 0;
            }
        }
        char conv = site->format[i];
        uint64_t v = values[next++];
        uint64_t u = size == 'L' ? v : size == 'h' ? (uint16_t)v : (uint32_t)v;
        int64_t d = size == 'L' ? (int64_t)v : size == 'h' ? (int16_t)(uint16_t)v : (int32_t)(uint32_t)v;
        char one = (char)(unsigned char)v;
        int ok;
        switch (conv) {
        case 'd': ok = put_signed(l, &sp, d); break;
        case 'u': ok = put_integer(l, &sp, u, 0, 0, 10, 0); break;
        case 'o': ok = put_integer(l, &sp, u, 0, 0, 8, 0); break;
        case 'x': ok = put_integer(l, &sp, u, 0, 0, 16, 0); break;
        case 'X': ok = put_integer(l, &sp, u, 0, 0, 16, 1); break;
        case 'c': ok = put_padded(l, &sp, &one, 1); break;
        case 's': ok = put_string(l, &sp, v); break;
        case 'p': {
            struct spec hex = sp; /* 0x... as %#lx, or (nil), padded to the width */
            hex.alt = 1;
            hex.plus = hex.space = hex.zero = 0;
            hex.precision = -1;
            ok = v == 0 ? put_padded(l, &sp, "(nil)", 5) : put_integer(l, &hex, v, 0, 0, 16, 0);
            break;
        }
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
