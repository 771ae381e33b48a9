"""Raises an error whose text is 12 MiB of line separators and escape sequences: more than
a reply may hold, so an older worker's reply was refused as tampering instead of being
the candidate's own error."""


def run(x, w, scale):
    raise RuntimeError("\u2028\x1b[2J\0" * (4 << 20))
