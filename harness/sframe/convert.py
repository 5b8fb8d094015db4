#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Re-encode an SFrame V1 section as V2 or V3 (binutils sframe-spec layouts).

  convert.py IN OUT SECADDR VERSION [pcrel]
  convert.py --elf IN OUT VERSION [pcrel]

IN is a raw V1 .sframe (objcopy -O binary --only-section=.sframe), SECADDR
the address the section has in the program. The output describes the same
functions with the same rows, so the reader must give the same frames for
it. V1 PCMASK FDEs get the AMD64 PLT block size, 16, as their repetition
size. Only the layout changes: FRE bytes are copied unchanged.

With --elf, IN is a 64-bit ELF program whose V1 .sframe is to be replaced,
linked with an allocated section .sframe_room to receive the new one (the
re-encoded section is larger than V1's, and a loaded section cannot grow in
place). OUT is a copy with the new section in the room, the old one zeroed,
and PT_GNU_SFRAME pointing at the room: the kernel finds and reads only the
new encoding.
"""
import struct
import sys

HDR = 28
PT_GNU_SFRAME = 0x6474E554


def convert(b, secaddr, version, pcrel, dstaddr=None):
    """The V1 section b, at secaddr in the program, as a V2 or V3 section
    to be placed at dstaddr (by default where b is)."""
    if dstaddr is None:
        dstaddr = secaddr
    magic, ver, flags, abi, fpo, rao, aux, nfde, nfre, frelen, fdeoff, freoff = \
        struct.unpack_from("<HBBBbbBIIIII", b, 0)
    assert magic == 0xDEE2 and ver == 1, "not a V1 section"
    hdr = HDR + aux
    fres = hdr + freoff
    funcs = []
    for i in range(nfde):
        start, size, fre_off, num, info = struct.unpack_from("<iIIIB", b, hdr + fdeoff + 17 * i)
        # Walk the rows to find how many bytes they take.
        pos = fres + fre_off
        asz = 1 << (info & 0xF)
        for _ in range(num):
            finfo = b[pos + asz]
            pos += asz + 1 + ((finfo >> 1) & 0xF) * (1 << ((finfo >> 5) & 3))
        funcs.append((secaddr + start, size, info, num, b[fres + fre_off:pos]))

    out_flags = 0x1 | (0x4 if pcrel else 0)
    fde_size = 20 if version == 2 else 16
    fdes, frebytes = b"", b""
    for i, (func, size, info, num, rows) in enumerate(funcs):
        field = dstaddr + HDR + fde_size * i
        start = func - (field if pcrel else dstaddr)
        rep = 16 if (info >> 4) & 1 else 0
        off = len(frebytes)
        if version == 2:
            fdes += struct.pack("<iIIIBBH", start, size, off, num, info, rep, 0)
            frebytes += rows
        else:
            fdes += struct.pack("<qII", start, size, off)
            frebytes += struct.pack("<HBBB", num, info, 0, rep) + rows
    hdrb = struct.pack("<HBBBbbBIIIII", 0xDEE2, version, out_flags, abi, fpo, rao, 0,
                       nfde, nfre, len(frebytes), 0, len(fdes))
    return hdrb + fdes + frebytes


def sections(elf):
    """Name -> (file offset, address, size) of every section of an ELF64."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    out = {}
    for name, _, _, addr, off, size in hdrs:
        end = elf.index(b"\0", strtab + name)
        out[elf[strtab + name:end].decode()] = (off, addr, size)
    return out


def convert_elf(src, dst, version, pcrel):
    elf = bytearray(open(src, "rb").read())
    assert elf[:4] == b"\x7fELF" and elf[4] == 2, "not an ELF64 file"
    secs = sections(elf)
    assert ".sframe" in secs and ".sframe_room" in secs, "no .sframe or no .sframe_room"
    off, addr, size = secs[".sframe"]
    roff, raddr, rsize = secs[".sframe_room"]
    new = convert(bytes(elf[off:off + size]), addr, version, pcrel, raddr)
    assert len(new) <= rsize, "the room is too small: %d > %d" % (len(new), rsize)
    assert raddr % 8 == 0, "the room is not 8-byte aligned"
    elf[roff:roff + len(new)] = new
    elf[off:off + size] = bytes(size)
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p = phoff + i * phentsize
        if struct.unpack_from("<I", elf, p)[0] == PT_GNU_SFRAME:
            # p_offset, p_vaddr, p_paddr, p_filesz, p_memsz
            struct.pack_into("<QQQQQ", elf, p + 8, roff, raddr, raddr, len(new), len(new))
            break
    else:
        raise AssertionError("no PT_GNU_SFRAME")
    open(dst, "wb").write(elf)


def main():
    args = sys.argv[1:]
    pcrel = args[-1] == "pcrel"
    if pcrel:
        args.pop()
    if args[0] == "--elf":
        convert_elf(args[1], args[2], int(args[3]), pcrel)
        return
    src, dst, secaddr, version = args[0], args[1], int(args[2], 0), int(args[3])
    open(dst, "wb").write(convert(open(src, "rb").read(), secaddr, version, pcrel))


if __name__ == "__main__":
    main()
