"""``python -m benchmarks <command> ...``: the group ``workbench bench`` runs, from a checkout."""

from benchmarks.cli import bench

if __name__ == "__main__":
    bench(prog_name="python -m benchmarks")
