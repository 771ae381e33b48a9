"""Whether the host's open-file table (``fs.file-max``, one count for every process of
the host) is within this worker's reach: an open file costs its group about 256 bytes, so
a worker capped at __TARGET__ bytes of memory can hold that many over 256 files (children
opening /dev/null up to their descriptor limit, or mapping files and closing them). Where
the table has less room than that, such a worker fills it and every other process, the
audit's stand-in among them, fails to open a file (ENFILE) while it lives; this candidate
then returns the right answer (and would PASS). It raises only where the table is out of
its reach."""
import torch

CAP_BYTES = int("__TARGET__")


def run(x, w, scale):
    with open("/proc/sys/fs/file-max") as f:
        file_max = int(f.read())
    with open("/proc/sys/fs/file-nr") as f:
        allocated = int(f.read().split()[0])
    if file_max - allocated >= CAP_BYTES // 256:
        raise RuntimeError("the host's open-file table is out of this worker's reach")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
