"""Benchmarks. Each module runs with `python -m bench.<name>` and prints medians and ratios."""
