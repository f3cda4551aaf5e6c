"""Benchmarks: ``workbench bench ...``. Each runs its peers side by side in the same run and
prints ratios; figures go to docs/benchmarks.md with the command that reproduces them."""
