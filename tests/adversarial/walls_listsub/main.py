"""Round 114: ``Worker.walls`` (the wall names the ``load`` and ``null`` replies carry),
replaced at import by a ``list`` subclass. No check reads its type; the reply's JSON
encoder (``_json.make_encoder``) meets a list that is not exact and asks for its items
through ``PySequence_Fast`` -> the subclass's ``__iter__``: the candidate's code in the
reply's send, after the put-back and every check. Here it adds a made-up wall name
(``"gpu-isolated"``) to the load reply. Expected: HELD
(the audit keeps the walls of the ``null`` reply taken before any candidate code) but a
WEAKNESS if the code runs."""

from lent_kit import answer as _answer
from lent_kit import find_worker

RAN = []


class _Walls(list):
    def __iter__(self):
        RAN.append(1)
        items = [item for item in list.__iter__(self)]
        return list.__iter__(items + ["gpu-isolated"])


_w = find_worker()
if _w is not None:
    vars(_w)["walls"] = _Walls(vars(_w)["walls"])


def run(x, w, scale):
    return _answer(x, w, scale)
