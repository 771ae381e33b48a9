"""An error whose ``__str__`` raises KeyboardInterrupt, past every ``except Exception``
of the worker's error path: it must end the error's text (named by its type), not the
worker."""


class _Err(Exception):
    def __str__(self):
        raise KeyboardInterrupt("from the error's own text, inside one_line")


def run(x, w, scale):
    raise _Err()
