/* The MPI-2 debugger interface (MPI2DD), as the DRAFT "An interface between a debugger
 * and an MPI implementation" (Rob Faught, Etnus, 2007; shipped as
 * src/mpi/debugger/mpi2_interface.txt in MPICH) describes it, for x86-64.
 *
 * Written once and included by both sides: the reference starter and rank library in C
 * (examples/mpi2dd/) and the debugger in C++ (ompdbg/tracer/mpi2dd.hpp). The debugger never
 * uses these structs to read a target through a pointer: it reads the bytes and decodes
 * them at the offsets below, which the static assertions pin (the proctable must be read
 * "without first having to find its type in the debug information").
 *
 * Every process of a job (starter, directory, metadirectory, rank) defines
 *     struct MPI2DD_INFO MPI2DD_info;
 * and calls MPI2DD_breakpoint() after setting debug_state, for each event. */
#ifndef OMPDBG_TRACER_MPI2DD_H
#define OMPDBG_TRACER_MPI2DD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An address of the target (x86-64: 8 bytes), stored as an integer so the layout does not
 * depend on the pointer type; MPI2DD_ADDR(p) converts a pointer. */
typedef uint64_t MPI2DD_ADDR_T;
typedef int32_t MPI2DD_INT32_T;
typedef uint32_t MPI2DD_UINT32_T;
typedef uint8_t MPI2DD_BYTE_T;
#define MPI2DD_ADDR(p) ((MPI2DD_ADDR_T)(uintptr_t)(p))

/* magic[0..4] */
#define MPI2DD_MAGIC_0 'M'
#define MPI2DD_MAGIC_1 'P'
#define MPI2DD_MAGIC_2 'I'
#define MPI2DD_MAGIC_3 '2'
#define MPI2DD_MAGIC_4 0x7f
#define MPI2DD_VERSION 1
#define MPI2DD_VARIANT 1

/* debug_state: why MPI2DD_breakpoint was called. Written by the MPI side. */
#define MPI2DD_DEBUG_START 1
#define MPI2DD_DEBUG_SPAWN 2
#define MPI2DD_DEBUG_CONNECT 3
#define MPI2DD_DEBUG_ACCEPT 4
#define MPI2DD_DEBUG_JOIN 5
#define MPI2DD_DEBUG_DIRECTORY_CHANGED 6
#define MPI2DD_DEBUG_METADIRECTORY_CHANGED 7
#define MPI2DD_DEBUG_ABORT 8

/* debugger_flags: initialised to 0 by the MPI side, set by the debugger. */
#define MPI2DD_FLAG_GATE 0x01                     /* a rank may leave its start-up */
#define MPI2DD_FLAG_BEING_DEBUGGED 0x02           /* a debugger is attached */
#define MPI2DD_FLAG_REQUEST_DIRECTORY_EVENTS 0x04 /* report (meta)directory changes */

/* mpi_flags: set by the MPI side only. */
#define MPI2DD_MPIFLAG_I_AM_METADIR 0x01
#define MPI2DD_MPIFLAG_I_AM_DIR 0x02
#define MPI2DD_MPIFLAG_I_AM_STARTER 0x04
#define MPI2DD_MPIFLAG_FORCE_TO_MAIN 0x08
#define MPI2DD_MPIFLAG_IGNORE_QUEUE 0x10
#define MPI2DD_MPIFLAG_ACQUIRED_PRE_MAIN 0x20
#define MPI2DD_MPIFLAG_PARTIAL_ATTACH_OK 0x40

/* Natural alignment leaves no padding in this struct (128 bytes), so it is not packed:
 * the rank library polls debugger_flags through a volatile pointer to it. */
struct MPI2DD_INFO {
    MPI2DD_BYTE_T magic[5];
    MPI2DD_BYTE_T version;
    MPI2DD_BYTE_T variant;
    MPI2DD_BYTE_T debug_state;
    MPI2DD_UINT32_T debugger_flags;
    MPI2DD_UINT32_T mpi_flags;
    MPI2DD_ADDR_T dll_name_32;          /* char*: message-queue DLL for 32-bit debuggers */
    MPI2DD_ADDR_T dll_name_64;          /* char*: ... for 64-bit debuggers */
    MPI2DD_ADDR_T meta_host_name;       /* char* */
    MPI2DD_ADDR_T meta_executable_name; /* char* */
    MPI2DD_ADDR_T abort_string;         /* char*, shown on MPI2DD_DEBUG_ABORT */
    MPI2DD_ADDR_T proctable;            /* struct MPI2DD_PROCDESC[proctable_size] */
    MPI2DD_ADDR_T directory_table;      /* struct MPI2DD_DIRECTORYENTRY[directory_size] */
    MPI2DD_ADDR_T metadirectory_table;  /* struct MPI2DD_DIRECTORYENTRY[metadirectory_size] */
    MPI2DD_INT32_T proctable_size;
    MPI2DD_INT32_T directory_size;
    MPI2DD_INT32_T metadirectory_size;
    MPI2DD_INT32_T meta_pid;
    MPI2DD_INT32_T padding[8];
};

/* One rank process. Packed: no padding, fixed order. */
struct __attribute__((packed)) MPI2DD_PROCDESC {
    MPI2DD_ADDR_T host_name;       /* char* */
    MPI2DD_ADDR_T executable_name; /* char* */
    MPI2DD_ADDR_T spawn_desc;      /* struct MPI2DD_SPAWNDESC*, 0 in the starter's world */
    MPI2DD_ADDR_T comm_world_id;   /* char* */
    MPI2DD_INT32_T pid;
    MPI2DD_INT32_T rank;
};

/* How a spawned comm world was created. Packed. */
struct __attribute__((packed)) MPI2DD_SPAWNDESC {
    MPI2DD_ADDR_T parent_comm_world_id; /* char* */
    MPI2DD_INT32_T parent_rank;
    MPI2DD_INT32_T sequence; /* 0, 1, ... per parent rank */
};

/* One directory or metadirectory process. Packed (20 bytes, not 24). */
struct __attribute__((packed)) MPI2DD_DIRECTORYENTRY {
    MPI2DD_ADDR_T host_name;       /* char* */
    MPI2DD_ADDR_T executable_name; /* char* */
    MPI2DD_INT32_T pid;
};

/* Offsets and sizes the debugger decodes with (x86-64). */
#define MPI2DD_INFO_SIZE 128
#define MPI2DD_INFO_OFF_DEBUG_STATE 7
#define MPI2DD_INFO_OFF_DEBUGGER_FLAGS 8
#define MPI2DD_INFO_OFF_MPI_FLAGS 12
#define MPI2DD_PROCDESC_SIZE 40
#define MPI2DD_SPAWNDESC_SIZE 16
#define MPI2DD_DIRECTORYENTRY_SIZE 20

#ifdef __cplusplus
#define MPI2DD_STATIC_ASSERT static_assert
#else
#define MPI2DD_STATIC_ASSERT _Static_assert
#endif
MPI2DD_STATIC_ASSERT(sizeof(struct MPI2DD_INFO) == MPI2DD_INFO_SIZE, "MPI2DD_INFO layout");
MPI2DD_STATIC_ASSERT(sizeof(struct MPI2DD_PROCDESC) == MPI2DD_PROCDESC_SIZE, "MPI2DD_PROCDESC layout");
MPI2DD_STATIC_ASSERT(sizeof(struct MPI2DD_SPAWNDESC) == MPI2DD_SPAWNDESC_SIZE, "MPI2DD_SPAWNDESC layout");
MPI2DD_STATIC_ASSERT(sizeof(struct MPI2DD_DIRECTORYENTRY) == MPI2DD_DIRECTORYENTRY_SIZE,
                     "MPI2DD_DIRECTORYENTRY layout");
#undef MPI2DD_STATIC_ASSERT

/* The MPI side's declarations; the debugger looks the symbols up by name. */
#ifndef MPI2DD_DEBUGGER_SIDE
extern struct MPI2DD_INFO MPI2DD_info;
void MPI2DD_breakpoint(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OMPDBG_TRACER_MPI2DD_H */
