"""The address of a C function of the interpreter, read from the dynamic symbol table of
the file it is mapped from: no ``ctypes`` lookup by name (``dlsym``), so no audit event
and nothing the worker's audit hook sees. A candidate that calls what it finds here uses
the route "What remains" in docs/verdicts.md names: a call at an address."""

import ctypes
import struct


def _mapped_files() -> dict[str, int]:
    """Each file mapped in this process, with the address its offset 0 is mapped at."""
    bases: dict[str, int] = {}
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) >= 6 and parts[5].startswith("/") and int(parts[2], 16) == 0:
                bases.setdefault(parts[5], int(parts[0].split("-")[0], 16))
    return bases


def _symbol_value(path: str, name: str) -> tuple[int, int] | None:
    """(the ELF file's type, the symbol's value) from its .dynsym, or None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2:  # 64-bit only
        return None
    e_type = struct.unpack_from("<H", data, 16)[0]
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for sh in sections:
        if sh[1] != 11:  # SHT_DYNSYM
            continue
        strtab = sections[sh[6]]
        for k in range(sh[5] // 24):
            st_name, _, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", data, sh[4] + k * 24)
            start = strtab[4] + st_name
            if st_value and data[start:data.index(b"\0", start)] == name.encode():
                return e_type, st_value
    return None


def address(name: str) -> int:
    """The address of the interpreter's C function ``name`` in this process."""
    for path, base in _mapped_files().items():
        found = _symbol_value(path, name)
        if found is not None:
            e_type, value = found
            return base + value if e_type == 3 else value  # ET_DYN: relative to its base
    raise LookupError(name)


def python_function(name: str, restype, *argtypes):
    """The interpreter's C function ``name`` as a ``ctypes`` function holding the GIL."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)(address(name))
