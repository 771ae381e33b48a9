"""Deterministic generators of the embedded sample workloads (never captured data)."""
