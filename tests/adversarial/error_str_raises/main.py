"""Raises an exception whose ``str`` raises too, inside the worker's own error handling."""


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no text")


def run(x, w, scale):
    raise Unprintable()
