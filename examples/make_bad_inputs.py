#!/usr/bin/env python3
"""Bad-input artifacts for the tests, made from one example binary.

    make_bad_inputs.py BINARY OUTDIR NAME

writes into OUTDIR (NAME is e.g. "structs"):
  NAME-stripped            strip(1)ped: no DWARF, no .symtab (.dynsym only)
  NAME-debuglink           stripped, DWARF in NAME-debuglink.debug beside it, found only
                           through .gnu_debuglink (no build-id copy anywhere)
  NAME-buildid             stripped, no debuglink; DWARF in
                           debug-root/.build-id/xx/yyyy.debug (found by build-id when
                           debug-root is the debug-file-directory)
  NAME-truncated-1000      the first 1000 bytes
  NAME-truncated-half      the first half
  NAME-corrupt-shdr        section header table overwritten (offsets/sizes out of range)
  NAME-corrupt-dwarf       .debug_info and .debug_abbrev contents overwritten with 0xff
  not-an-elf               a text file with the execute bit (exec fails with ENOEXEC)
  bad-inputs.stamp         written last
"""
import os
import shutil
import struct
import subprocess
import sys


def run(*args):
    subprocess.run(args, check=True)


def section_headers(data):
    """(name, offset, size, header_offset) of each section of a 64-bit ELF."""
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        sh_name, _type, _flags, _addr, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", data, off)
        headers.append((sh_name, sh_offset, sh_size, off))
    strtab_off, strtab_size = headers[e_shstrndx][1], headers[e_shstrndx][2]
    strtab = data[strtab_off:strtab_off + strtab_size]
    named = []
    for sh_name, sh_offset, sh_size, off in headers:
        end = strtab.index(b"\0", sh_name)
        named.append((strtab[sh_name:end].decode(), sh_offset, sh_size, off))
    return named


def build_id(path):
    with open(path, "rb") as f:
        data = f.read()
    for name, off, size, _ in section_headers(data):
        if name == ".note.gnu.build-id":
            namesz, descsz, _type = struct.unpack_from("<III", data, off)
            desc = off + 12 + ((namesz + 3) & ~3)
            return data[desc:desc + descsz].hex()
    return None


def write(path, data, mode=0o755):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def main():
    binary, outdir, name = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    out = lambda suffix: os.path.join(outdir, f"{name}-{suffix}")
    with open(binary, "rb") as f:
        data = f.read()

    run("strip", "-o", out("stripped"), binary)

    # .gnu_debuglink: the link names the debug file by basename; it must exist when the
    # link is added (objcopy stores its CRC), so work inside outdir.
    dbg = f"{name}-debuglink.debug"
    run("objcopy", "--only-keep-debug", binary, os.path.join(outdir, dbg))
    run("strip", "-o", out("debuglink.tmp"), binary)
    subprocess.run(["objcopy", f"--add-gnu-debuglink={dbg}", f"{name}-debuglink.tmp",
                    f"{name}-debuglink"], check=True, cwd=outdir)
    os.remove(out("debuglink.tmp"))

    # build-id: .build-id/xx/rest.debug under a debug root of our own.
    bid = build_id(binary)
    if bid is None:
        sys.exit(f"{binary} has no build-id note")
    root = os.path.join(outdir, "debug-root", ".build-id", bid[:2])
    shutil.rmtree(os.path.join(outdir, "debug-root"), ignore_errors=True)
    os.makedirs(root)
    run("objcopy", "--only-keep-debug", binary, os.path.join(root, bid[2:] + ".debug"))
    run("strip", "-o", out("buildid"), binary)

    write(out("truncated-1000"), data[:1000])
    write(out("truncated-half"), data[:len(data) // 2])

    # Section headers: every section's offset and size far beyond the end of the file.
    shdr = bytearray(data)
    for _name, _off, _size, hoff in section_headers(data)[1:]:
        struct.pack_into("<QQ", shdr, hoff + 0x18, 0x7FFFFFFF0000, 0x7FFFFFFF0000)
    write(out("corrupt-shdr"), bytes(shdr))

    # DWARF: headers intact, the contents of the unit and abbreviation tables garbage.
    dwarf = bytearray(data)
    hit = 0
    for sec, off, size, _ in section_headers(data):
        if sec in (".debug_info", ".debug_abbrev"):
            dwarf[off:off + size] = b"\xff" * size
            hit += 1
    if hit != 2:
        sys.exit(f"{binary}: no .debug_info/.debug_abbrev to corrupt")
    write(out("corrupt-dwarf"), bytes(dwarf))

    write(os.path.join(outdir, "not-an-elf"),
          b"This is a text file, not an ELF executable.\nompdbg must say so and go on.\n")

    with open(os.path.join(outdir, "bad-inputs.stamp"), "w") as f:
        f.write(f"build-id {bid}\n")


if __name__ == "__main__":
    main()
