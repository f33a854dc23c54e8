#!/usr/bin/env python3
"""Seed corpora of the fuzz targets, made from the built examples.

    fuzz/seeds.py EXAMPLES_DIR CORPUS_DIR

writes CORPUS_DIR/<target>/ for each target of fuzz/ (existing files are kept, so a corpus
grows from run to run):
  elf_dwarf   the -O0 builds of structs and crash (gcc and clang, DWARF 4 and 5)
  core_file   a core of `crash segv` (the kernel's, written with RLIMIT_CORE raised)
  mpir        a two-rank MPIR_proctable image (layout of fuzz/mpir.cpp)
  mpi2dd      an MPI2DD_info image with a proctable, a spawn descriptor and a directory
  dmpl        a few answer streams (fuzz_dmpl_plugin.c reads them byte by byte)
  msgq        the same for the message-queue DLL (fuzz_msgq_dll.cpp)
  ompd        the same for libompd (fuzz_ompd_lib.c)
"""
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile

BASE = 0x10000   # fuzz/memory_image.hpp: where the image is mapped


def put(corpus, target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def elf_seeds(examples, corpus):
    for prog in ("structs", "crash"):
        for cc in ("gcc", "clang"):
            for dw in (4, 5):
                path = os.path.join(examples, f"{prog}-{cc}-dwarf{dw}-O0")
                with open(path, "rb") as f:
                    put(corpus, "elf_dwarf", os.path.basename(path), f.read())


def core_seed(examples, corpus):
    prog = os.path.join(examples, "crash-gcc-dwarf5-O0")
    with tempfile.TemporaryDirectory() as tmp:
        def raise_limit():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        subprocess.run([prog, "segv"], cwd=tmp, preexec_fn=raise_limit,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cores = [n for n in os.listdir(tmp) if n == "core" or n.startswith("core.")]
        if not cores:
            print("seeds.py: no core written (core_pattern is not a plain file name); "
                  "core_file starts from an empty corpus", file=sys.stderr)
            return
        with open(os.path.join(tmp, cores[0]), "rb") as f:
            put(corpus, "core_file", "crash-segv.core", f.read())


class image:
    """A memory image at BASE; add() appends bytes and returns their address."""
    def __init__(self, header_size):
        self.data = bytearray(header_size)

    def add(self, b):
        addr = BASE + len(self.data)
        self.data += b
        return addr


def mpir_seed(corpus):
    img = image(16)
    entries = []
    for rank in range(2):
        host = img.add(b"node%d\0" % rank)
        exe = img.add(b"/usr/bin/ring\0")
        entries.append(struct.pack("<QQi4x", host, exe, 1000 + rank))
    table = img.add(b"".join(entries))
    struct.pack_into("<Qi", img.data, 0, table, 2)
    put(corpus, "mpir", "two-ranks", bytes(img.data))


def mpi2dd_seed(corpus):
    img = image(128)
    s = lambda text: img.add(text.encode() + b"\0")
    dll = s("/usr/lib/libmsgq.so")
    host, exe, world = s("node0"), s("/usr/bin/ring"), s("world-1")
    spawn = img.add(struct.pack("<Qii", s("world-0"), 0, 0))
    procs = img.add(struct.pack("<QQQQii", host, exe, 0, world, 1000, 0) +
                    struct.pack("<QQQQii", host, exe, spawn, world, 1001, 1))
    dirs = img.add(struct.pack("<QQi", host, exe, 999))
    struct.pack_into("<5sBBBII", img.data, 0, b"MPI2\x7f", 1, 1, 1, 3, 0x4)
    struct.pack_into("<QQQQQQQQiiii", img.data, 16, dll, dll, host, exe, s("aborted"), procs, dirs, dirs,
                     2, 1, 1, 999)
    put(corpus, "mpi2dd", "starter", bytes(img.data))


def dmpl_seed(corpus):
    # Answers: DMPL_ok with a short name, then a too-long request, then memory.
    name = b"x"
    answers = bytes([len(name)]) + name + bytes([0]) + struct.pack("<ii", 1, 42) + bytes([0])
    answers += bytes([6]) + b"helper" + bytes([1]) + struct.pack("<i", 300) + struct.pack("<ii", 0, 0) + bytes([1])
    put(corpus, "dmpl", "demangle", answers + bytes(len(answers)))
    put(corpus, "dmpl", "callbacks", bytes(range(256)) * 2)


def msgq_seed(corpus):
    # Answers: image and process set up without callbacks, one communicator of size 4 with
    # its group, then one pending send whose extra_text names a request; then memory.
    ok = bytes([0])
    answers = ok * 2 + bytes([0]) + ok + ok * 2 + bytes([0]) + ok
    answers += ok * 2  # update_communicator_list, setup_communicator_iterator
    comm = struct.pack("<Q", 0x1234) + bytes([1, 2, 1, 4]) + b"MPI_COMM_WORLD".ljust(64, b"\0") + ok
    group = b"".join(bytes([1, r]) for r in range(4)) + ok
    op = bytes([0, 1, 1, 1, 1, 0]) + struct.pack("<IQ", 7, 64) + bytes([1, 1, 0x20, 0x00])
    op += bytes([1, 1, 1, 1]) + struct.pack("<IQ", 7, 64) + bytes([0, 0, 0x40, 0x00]) + bytes(64 * 4) + ok
    answers += comm + group + ok + op
    put(corpus, "msgq", "one-send", answers + bytes(len(answers)))
    put(corpus, "msgq", "callbacks", bytes([5]) + bytes(range(256)) * 4)


def ompd_seed(corpus):
    # Zero answers take the library's happy path (ompd_rc_ok, its first handle, no
    # callbacks); the second seed exercises every callback.
    put(corpus, "ompd", "zeros", bytes(4096))
    put(corpus, "ompd", "callbacks", bytes([3]) + bytes(range(256)) * 8)


def main():
    examples, corpus = (os.path.abspath(p) for p in sys.argv[1:3])
    elf_seeds(examples, corpus)
    core_seed(examples, corpus)
    mpir_seed(corpus)
    mpi2dd_seed(corpus)
    dmpl_seed(corpus)
    msgq_seed(corpus)
    ompd_seed(corpus)


if __name__ == "__main__":
    main()
