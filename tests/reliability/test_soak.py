"""Issue 22: three minutes of mixed traffic on one server process, without a leak.

`bench/soak.py --minutes 3 --interval 10` (the 30-minute run is `--minutes 30`): 50 clients
loop over AG-UI runs, AI SDK runs, approvals answered by a resume, clients that disconnect
(their runs go on, detached) and AI SDK runs followed again through the resume GET, against a
server process with a SQLiteStore. It samples the server's RSS, open file descriptors,
asyncio tasks and threads every 10 s, and exits 0 only when memory at the end is within 10 %
of memory after the first sixth, file descriptors, tasks and threads did not grow, and no
request failed. Run with `-s` to see its table.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(360)
def test_three_minutes_of_mixed_traffic_leak_no_memory_fds_tasks_or_threads() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", "3",
                           "--interval", "10"], env=env, capture_output=True, text=True,
                          timeout=330, check=False)
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "ok   failed requests: 0" in done.stdout
