"""Run every benchmark: ``python -m bench`` imports each ``bench/bench_*.py`` and calls main()."""

from __future__ import annotations

import importlib
import pkgutil
import time

import bench


def main() -> None:
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
