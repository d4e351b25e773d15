"""`store.load_run(run_id)` / `aload_run` give the run's `RunState`, on every backend; and
`RedisStore` is a name of `pyox_agents.stores` beside the others, without making `redis` needed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pyox_agents import Agent, RunContext, RunState, RunStatus, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.stores import Store
from tests.stores.test_contract import store  # noqa: F401 - the fixture of every backend

ROOT = Path(__file__).resolve().parents[2]


@tool(approval=True)
def pay(ctx: RunContext, amount: int) -> str:
    """Pay an amount (a person approves first)."""
    ctx.state["paid"] += amount
    return "paid"


@pytest.mark.anyio
async def test_load_run_gives_the_run_state_that_check_status_and_pending_work_on(
        store: Store) -> None:  # noqa: F811
    """Seed 003: the RunState is "one run's durable record"; the store gives it back as one."""
    agent = Agent(ScriptedModel([ToolCall("pay", {"amount": 5}), "Paid."]), tools=[pay],
                  store=store)
    paused = await agent.arun("buy", state={"paid": 0})
    for run in (store.load_run(paused.run_id), await store.aload_run(paused.run_id)):
        assert isinstance(run, RunState)
        run.check()
        assert run.status is RunStatus.PAUSED
        assert run.pending is not None and run.pending.tool == "pay"
        assert run.to_dict() == store.load_run_record(paused.run_id)
    with pytest.raises(LookupError):
        store.load_run("nobody")


def test_redis_store_is_imported_from_pyox_agents_stores() -> None:
    from pyox_agents.stores import RedisStore
    from pyox_agents.stores.redis import RedisStore as Defined

    assert RedisStore is Defined


def test_without_redis_the_stores_import_and_redis_store_names_the_extra() -> None:
    code = ("import sys; sys.modules['redis'] = None\n"
            "from pyox_agents.stores import MemoryStore, SQLiteStore\n"
            "try:\n"
            "    from pyox_agents.stores import RedisStore\n"
            "except ImportError as exc:\n"
            "    print(exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "pip install 'pyox-agents[redis]'" in proc.stdout
