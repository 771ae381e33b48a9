#!/usr/bin/env bash
# The host's settings that bear on stalls of a few to tens of milliseconds: the CPU cgroup
# and its quota, memory, transparent huge pages, the CPU governor, pressure, what runs.
for f in /proc/self/cgroup /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu.stat \
         /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us \
         /sys/fs/cgroup/cpu/cpu.stat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.high \
         /sys/fs/cgroup/cpuset.cpus.effective /sys/kernel/mm/transparent_hugepage/enabled \
         /sys/kernel/mm/transparent_hugepage/defrag /proc/sys/vm/swappiness \
         /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor /proc/pressure/cpu \
         /proc/pressure/memory /proc/pressure/io /proc/loadavg; do
  echo "== $f"; cat "$f" 2>&1
done
echo "== nproc"; nproc
echo "== free -m"; free -m
echo "== ps"; ps -eo pid,ppid,pcpu,rss,comm --sort=-pcpu | head -20
echo "== nvidia-smi -q (persistence, clocks)"
nvidia-smi -q | grep -iE "persistence|compute mode|clocks event|throttle|power limit" | head -20
