"""Per-family value rules the checker applies to workload inputs."""
