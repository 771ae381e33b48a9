"""Round 114: ``run()`` raises an exception whose class ``__name__`` is a ``str``
subclass (kept as is by ``type.__name__``'s setter). The serve loop's error path reads it
with ``str(_type_name(type(exc)))``: ``str()`` of a str subclass calls its ``__str__``, the
candidate's code, with the reply in hand, after the put-back of the handler. It returns
text imitating the audit's own words ("DATA_ERROR"), and sets a frame-evaluation-free
flag. Expected HELD (RUNTIME_ERROR, the name quoted as the candidate's text)."""

RAN = []


class _Name(str):
    def __str__(self):
        RAN.append(1)
        return "DATA_ERROR (the workload's data could not be read; harness"


class _Boom(Exception):
    pass


_Boom.__name__ = _Name("Boom")


def run(x, w, scale):
    raise _Boom("reference failed")
