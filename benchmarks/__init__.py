"""Benchmarks against Vela (`cascade.benchmarks`: installed so that `cascade-bench` can run them)."""
