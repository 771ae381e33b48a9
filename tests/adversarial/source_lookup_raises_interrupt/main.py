"""The error path runs the candidate's code: the worker formats a failing call's
traceback, and the source lines of a frame come from its module's ``__loader__``, here
the candidate's, whose ``get_source`` raises KeyboardInterrupt past every ``except
Exception``. It must end the traceback's text, not the worker."""
_SOURCE = "def boom():\n    raise ValueError(\"boom\")\n"


class _Loader:
    def get_source(self, name):
        raise KeyboardInterrupt("from get_source inside the harness's error path")


_G = {"__name__": "fake_mod", "__loader__": _Loader()}
exec(compile(_SOURCE, "/nonexistent/fake_mod.py", "exec"), _G)


def run(x, w, scale):
    _G["boom"]()
