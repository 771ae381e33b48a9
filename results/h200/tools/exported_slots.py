"""Can the audit own a worker's output slots in device memory? A measurement, not harness code.

    python3 results/h200/tools/exported_slots.py [--mib 128] [--repeats 20]

Today a worker copies every call's outputs into host memory the audit lent (a transfer
at PCIe speed, inside the clocked request). This tries the other way on one GPU: the
parent process (the audit's place) allocates device memory with the CUDA driver's
virtual memory calls (``cuMemCreate``), exports it as a file descriptor
(``cuMemExportToShareableHandle``, POSIX fd) and sends the descriptor over a UNIX socket
(``SCM_RIGHTS``, as the harness lends its shared memory) to a child started before the
parent touched CUDA, in its own PID, IPC and mount namespaces when run as root (as the
workers are). The child imports and maps it, copies a tensor of its own into it and
times that copy against a copy into pinned host memory of the same size; the parent then
reads the child's bytes in its own mapping. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import socket
import sys
import time

CU_MEM_ALLOCATION_TYPE_PINNED = 1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x00020000, 0x08000000, 0x20000000


class Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", Location), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", AllocFlags)]


class AccessDesc(ctypes.Structure):
    _fields_ = [("location", Location), ("flags", ctypes.c_int)]


def driver():
    cuda = ctypes.CDLL("libcuda.so.1")

    def call(name, *args):
        result = getattr(cuda, name)(*args)
        if result != 0:
            raise RuntimeError(f"{name} returned CUDA error {result}")
    return call


def prop(device: int) -> AllocationProp:
    p = AllocationProp()
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    p.location = Location(CU_MEM_LOCATION_TYPE_DEVICE, device)
    return p


def mapped(call, handle: int, size: int, device: int) -> int:
    """Reserve an address range, map ``handle`` there, allow this device to use it."""
    ptr = ctypes.c_uint64()
    call("cuMemAddressReserve", ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
         ctypes.c_uint64(0), ctypes.c_uint64(0))
    call("cuMemMap", ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_uint64(handle),
         ctypes.c_uint64(0))
    desc = AccessDesc(Location(CU_MEM_LOCATION_TYPE_DEVICE, device),
                      CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    call("cuMemSetAccess", ptr, ctypes.c_size_t(size), ctypes.byref(desc), ctypes.c_size_t(1))
    return ptr.value


def as_tensor(ptr: int, size: int):
    import torch

    class Interface:
        __cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False),
                                    "version": 3}
    return torch.as_tensor(Interface(), device="cuda")


def child(sock: socket.socket, repeats: int) -> None:
    import torch

    torch.zeros(1, device="cuda")
    call = driver()
    msg, fds, _, _ = socket.recv_fds(sock, 64, 1)
    size = json.loads(msg)["size"]
    handle = ctypes.c_uint64()
    call("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fds[0]),
         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    os.close(fds[0])
    slot = as_tensor(mapped(call, handle.value, size, 0), size)
    mine = torch.randint(0, 256, (size,), dtype=torch.uint8, device="cuda")
    pinned = torch.empty(size, dtype=torch.uint8, pin_memory=True)

    def timed(target) -> float:
        times = []
        for _ in range(repeats):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            target.copy_(mine, non_blocking=True)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        return sorted(times)[len(times) // 2]

    result = {"pid_in_child": os.getpid(), "device_slot_ms": timed(slot),
              "pinned_host_ms": timed(pinned),
              "checksum": int(mine.to(torch.int64).sum().item())}
    sock.sendall(json.dumps(result).encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    parent_sock, child_sock = socket.socketpair()
    namespaces = os.geteuid() == 0
    pid = os.fork()
    if pid == 0:  # before the parent touches CUDA
        parent_sock.close()
        try:
            if namespaces:
                os.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID)
                if os.fork():  # the namespace's first process runs the child's work
                    os._exit(os.waitstatus_to_exitcode(os.wait()[1]))
            child(child_sock, args.repeats)
            os._exit(0)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            child_sock.sendall(json.dumps({"child_error": repr(exc)}).encode())
            os._exit(1)
    child_sock.close()
    import torch

    torch.zeros(1, device="cuda")
    call = driver()
    p = prop(0)
    granularity = ctypes.c_size_t()
    call("cuMemGetAllocationGranularity", ctypes.byref(granularity), ctypes.byref(p), 0)
    size = -(-(args.mib << 20) // granularity.value) * granularity.value
    handle = ctypes.c_uint64()
    call("cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(p),
         ctypes.c_uint64(0))
    fd = ctypes.c_int()
    call("cuMemExportToShareableHandle", ctypes.byref(fd), ctypes.c_uint64(handle.value),
         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, ctypes.c_uint64(0))
    mine = as_tensor(mapped(call, handle.value, size, 0), size)
    mine.zero_()
    torch.cuda.synchronize()
    try:
        socket.send_fds(parent_sock, [json.dumps({"size": size}).encode()], [fd.value])
    except OSError as exc:  # the child ended first: say why, from what it sent and its status
        sent = parent_sock.recv(1 << 16)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        print(json.dumps({"send_failed": repr(exc), "child_exit": status,
                          "child_sent": sent.decode(errors="replace")}))
        return 1
    os.close(fd.value)
    reply = json.loads(parent_sock.recv(1 << 16))
    os.waitpid(pid, 0)
    report = {"size_bytes": size, "granularity": granularity.value,
              "child_in_new_namespaces": namespaces, **reply}
    if "checksum" in reply:
        report["parent_sees_child_bytes"] = int(mine.to(torch.int64).sum().item()) \
            == reply["checksum"]
        for key in ("device_slot_ms", "pinned_host_ms"):
            report[key.replace("_ms", "_gb_s")] = round(size / reply[key] / 1e6, 1)
    print(json.dumps(report))
    return 0 if report.get("parent_sees_child_bytes") else 1


if __name__ == "__main__":
    sys.exit(main())
