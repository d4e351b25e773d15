"""The concurrency bench's app as a module attribute, for `pyox-agents serve served:app`
(bench/processes.py serves it from `--workers N`; the env vars of `common.ours_app` apply)."""

from common import ours_app

app = ours_app()
