"""Run every benchmark: ``python -m bench`` imports each ``bench/bench_*.py`` and calls main()."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import time

import bench


def main() -> None:
    # As `make bench` does: keep jsii's Node version banners out of the figures (the
    # end-of-life one is silenced only for the Node major it names).
    node = subprocess.run(
        ["node", "-p", "process.versions.node.split('.')[0]"], capture_output=True, text=True
    )
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", node.stdout.strip())
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    names = sorted(
        info.name for info in pkgutil.iter_modules(bench.__path__) if info.name.startswith("bench_")
    )
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        print(f"== bench.{name} ==", flush=True)
        started = time.perf_counter()
        module.main()
        print(f"({time.perf_counter() - started:.1f} s)\n", flush=True)


if __name__ == "__main__":
    main()
