"""(CUDA) The launch gate's value set to 2**31 - 1 at import: the next close would wait for
a value the 32-bit word cannot hold and the open's fill of it would raise inside the
harness's own code, with a stream left waiting. The gate's state is checked after every
request (and before every close): the candidate's error, named as such."""
import lent_kit

worker = lent_kit.find_worker()
if worker is not None and worker.gate is not None:
    worker.gate.value = 2 ** 31 - 1


def run(x, w, scale):
    return lent_kit.answer(x, w, scale)
