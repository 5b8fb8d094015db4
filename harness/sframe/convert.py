#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Re-encode an SFrame V1 section as V2 or V3 (binutils sframe-spec layouts).

  convert.py IN OUT SECADDR VERSION [pcrel]

IN is a raw V1 .sframe (objcopy -O binary --only-section=.sframe), SECADDR
the address the section has in the program. The output describes the same
functions with the same rows, so the reader must give the same frames for
it. V1 PCMASK FDEs get the AMD64 PLT block size, 16, as their repetition
size. Only the layout changes: FRE bytes are copied unchanged.
"""
import struct
import sys

HDR = 28


def main():
    src, dst, secaddr, version = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4])
    pcrel = len(sys.argv) > 5 and sys.argv[5] == "pcrel"
    b = open(src, "rb").read()
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
        field = secaddr + HDR + fde_size * i
        start = func - (field if pcrel else secaddr)
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
    open(dst, "wb").write(hdrb + fdes + frebytes)


main()
