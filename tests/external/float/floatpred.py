"""floatpred.py: TIFF's floating-point predictor (3), TIFF LZW and a small TIFF writer, in numpy.

Written from Adobe's TIFF 6.0 specification (LZW, section 13) and Technical Note 3 (the
floating-point predictor) so that the test files do not come from libtiff, the library the
reader under test uses, nor need imagecodecs (not packaged by Debian), which tifffile wants
for predictor 3 and for LZW.
"""
import struct
import zlib

import numpy as np


def fp_predict(rows):
    """Encode rows (2-D, one sample a pixel, float32 or float64): each row's samples split
    into byte planes, most significant byte first, then every byte minus the one before it."""
    rows = np.ascontiguousarray(rows)
    size = rows.dtype.itemsize
    big = rows.astype(rows.dtype.newbyteorder(">")).view(np.uint8).reshape(rows.shape[0], -1, size)
    planes = np.ascontiguousarray(big.transpose(0, 2, 1)).reshape(rows.shape[0], -1)
    out = planes.copy()
    out[:, 1:] = planes[:, 1:] - planes[:, :-1]  # uint8: modulo 256
    return out


def fp_unpredict(data, height, width, dtype):
    """Decode fp_predict's bytes (height rows of width samples) to native samples."""
    size = np.dtype(dtype).itemsize
    planes = np.frombuffer(data, np.uint8)[: height * width * size].reshape(height, width * size)
    planes = np.cumsum(planes, axis=1, dtype=np.uint64).astype(np.uint8)  # modulo 256
    big = np.ascontiguousarray(planes.reshape(height, size, width).transpose(0, 2, 1))
    return big.view(np.dtype(dtype).newbyteorder(">")).reshape(height, width).astype(dtype)


CLEAR, EOI, FIRST_FREE = 256, 257, 258
TABLE_FULL = 4094  # a Clear code is sent when the next free code would be this


def lzw_encode(data):
    """TIFF LZW: 9 to 12-bit codes, most significant bit first, a Clear code first and
    whenever the table fills. The encoder widens its codes once the next free code needs
    the extra bit; the decoder, one table entry behind, widens one code early ("early
    change"), as the specification describes."""
    out = bytearray()
    acc = 0
    nacc = 0

    def put(code, nbits):
        nonlocal acc, nacc
        acc = (acc << nbits) | code
        nacc += nbits
        while nacc >= 8:
            nacc -= 8
            out.append((acc >> nacc) & 0xFF)
        acc &= (1 << nacc) - 1

    table = {}
    nbits, free = 9, FIRST_FREE
    put(CLEAR, nbits)
    ent = None
    for byte in data:
        if ent is None:
            ent = byte
            continue
        key = (ent, byte)
        if key in table:
            ent = table[key]
            continue
        put(ent, nbits)
        table[key] = free
        free += 1
        ent = byte
        if free == TABLE_FULL:
            put(CLEAR, nbits)
            table, nbits, free = {}, 9, FIRST_FREE
        elif free == 1 << nbits:
            nbits += 1
    if ent is not None:
        put(ent, nbits)
        free += 1
        if free == TABLE_FULL:
            put(CLEAR, nbits)
            nbits = 9
        elif free == 1 << nbits:
            nbits += 1
    put(EOI, nbits)
    if nacc:
        out.append((acc << (8 - nacc)) & 0xFF)
    return bytes(out)


TYPE_SHORT, TYPE_LONG = 3, 4
COMPRESSION = {"none": 1, "lzw": 5, "deflate": 8}
SAMPLEFORMAT_IEEEFP = 3


def write_tiff(path, image, compression="deflate", predictor=3, rows_per_strip=None, tile=None,
               big_endian=False):
    """A classic TIFF of one gray float image, in strips or (tile = (h, w)) tiles, each
    piece predicted (3) and compressed here."""
    image = np.ascontiguousarray(image)
    height, width = image.shape
    e = ">" if big_endian else "<"
    native = image.dtype.newbyteorder(e)

    def encode(rows):
        raw = fp_predict(rows).tobytes() if predictor == 3 else rows.astype(native).tobytes()
        if compression == "deflate":
            return zlib.compress(raw, 6)
        if compression == "lzw":
            return lzw_encode(raw)
        return raw

    pieces = []
    if tile:
        th, tw = tile
        for y in range(0, height, th):
            for x in range(0, width, tw):
                block = np.zeros((th, tw), image.dtype)
                part = image[y:y + th, x:x + tw]
                block[: part.shape[0], : part.shape[1]] = part
                pieces.append(encode(block))
    else:
        rps = rows_per_strip or height
        for y in range(0, height, rps):
            pieces.append(encode(image[y:y + rps]))
    header = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", 8)
    # Layout: header, the directory, the offsets and byte counts tables, the pieces.
    data = b""
    offsets = []
    entries_count = 12 if not tile else 13
    blob_at = 8 + 2 + 12 * entries_count + 4
    offsets_at = blob_at
    counts_at = offsets_at + 4 * len(pieces)
    at = counts_at + 4 * len(pieces)
    for p in pieces:
        offsets.append(at)
        at += len(p)
        data += p
    counts = [len(p) for p in pieces]

    def entry(tag, typ, count, value):
        if typ == TYPE_SHORT and count == 1:
            return struct.pack(e + "HHIHH", tag, typ, count, value, 0)
        return struct.pack(e + "HHII", tag, typ, count, value)

    def pieces_entry(tag, values, table_at):
        if len(values) == 1:
            return struct.pack(e + "HHII", tag, TYPE_LONG, 1, values[0])
        return entry(tag, TYPE_LONG, len(values), table_at)

    ents = [
        struct.pack(e + "HHII", 256, TYPE_LONG, 1, width),
        struct.pack(e + "HHII", 257, TYPE_LONG, 1, height),
        entry(258, TYPE_SHORT, 1, image.dtype.itemsize * 8),
        entry(259, TYPE_SHORT, 1, COMPRESSION[compression]),
        entry(262, TYPE_SHORT, 1, 1),  # BlackIsZero
    ]
    if tile:
        ents += [
            entry(277, TYPE_SHORT, 1, 1),
            entry(317, TYPE_SHORT, 1, predictor),
            entry(322, TYPE_SHORT, 1, tile[1]),
            entry(323, TYPE_SHORT, 1, tile[0]),
            pieces_entry(324, offsets, offsets_at),
            pieces_entry(325, counts, counts_at),
            entry(339, TYPE_SHORT, 1, SAMPLEFORMAT_IEEEFP),
            entry(284, TYPE_SHORT, 1, 1),
        ]
    else:
        ents += [
            pieces_entry(273, offsets, offsets_at),
            entry(277, TYPE_SHORT, 1, 1),
            struct.pack(e + "HHII", 278, TYPE_LONG, 1, rows_per_strip or height),
            pieces_entry(279, counts, counts_at),
            entry(284, TYPE_SHORT, 1, 1),
            entry(317, TYPE_SHORT, 1, predictor),
            entry(339, TYPE_SHORT, 1, SAMPLEFORMAT_IEEEFP),
        ]
    ents.sort(key=lambda b: struct.unpack(e + "H", b[:2])[0])  # tags in ascending order
    assert len(ents) == entries_count
    ifd = struct.pack(e + "H", len(ents)) + b"".join(ents) + struct.pack(e + "I", 0)
    out = header + ifd + struct.pack(e + "%dI" % len(pieces), *offsets) + \
        struct.pack(e + "%dI" % len(pieces), *counts) + data
    assert len(header + ifd) == blob_at
    with open(path, "wb") as f:
        f.write(out)
