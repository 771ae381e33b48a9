"""The host's stall counters every few milliseconds, as CSV on stdout. A measurement, not
harness code: read beside a timing run's records (each trial's ``candidate_at`` and
``stand_in_at``) to tell what a stalled request shared its moment with.

    python3 results/h200/tools/host_sampler.py [--every-ms 10] > host.csv

Columns: wall time (epoch s); the CPU cgroup's throttling (``nr_throttled``,
``throttled_usec``); the cumulative stall time of CPU, memory and I/O pressure (``some``,
us) of the system; direct reclaim and compaction stalls and major faults
(``/proc/vmstat``); context switches and running tasks (``/proc/stat``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

VMSTAT = ("allocstall_normal", "allocstall_movable", "compact_stall", "pgmajfault",
          "thp_fault_alloc", "pgscan_direct")


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _fields(text: str) -> dict[str, str]:
    return dict(line.split(maxsplit=1) for line in text.splitlines() if " " in line)


def _pressure(kind: str) -> str:
    for line in _read(f"/proc/pressure/{kind}").splitlines():
        if line.startswith("some"):
            return line.rsplit("total=", 1)[-1]
    return ""


def sample() -> list[str]:
    cpu = _fields(_read("/sys/fs/cgroup/cpu.stat"))  # cgroup v2; v1 below (ns)
    if not cpu:
        cpu = _fields(_read("/sys/fs/cgroup/cpu/cpu.stat"))
        if "throttled_time" in cpu:
            cpu["throttled_usec"] = str(int(cpu["throttled_time"]) // 1000)
    vm = _fields(_read("/proc/vmstat"))
    stat = _fields(_read("/proc/stat"))
    return [f"{time.time():.4f}", cpu.get("nr_throttled", ""), cpu.get("throttled_usec", ""),
            _pressure("cpu"), _pressure("memory"), _pressure("io"),
            *(vm.get(k, "") for k in VMSTAT), stat.get("ctxt", ""),
            stat.get("procs_running", "")]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--every-ms", type=float, default=10.0)
    args = parser.parse_args()
    print(",".join(["t", "nr_throttled", "throttled_usec", "cpu_some_us", "memory_some_us",
                    "io_some_us", *VMSTAT, "ctxt", "procs_running"]), flush=True)
    while True:
        print(",".join(sample()), flush=True)
        time.sleep(args.every_ms / 1e3)


if __name__ == "__main__":
    sys.exit(main())
