"""Run every benchmark and print its figures (`make bench`)."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    "start_time.py",
    "start_profile.py",
    "class_burst.py",
    "density.py",
    "prewarm_open.py",
    "proxy_overhead.py",
    "collab_latency.py",
    "culler_pass.py",
    "semester.py",
    "deploy_copy.py",
    "bench_serial.py",
    "bench_transfer.py",
    "desktop_bench.py",
    "apps_footprint.py",
    "vm_boot.py",
    "competition_bench.py",
    "fleet_burst.py",
]

if __name__ == "__main__":
    selected = sys.argv[1:] or BENCHMARKS
    failed = 0
    for script in selected:
        print(f"\n### {script}", flush=True)
        failed += (
            subprocess.run([sys.executable, str(HERE / script)], cwd=HERE, check=False).returncode
            != 0
        )
    sys.exit(1 if failed else 0)
