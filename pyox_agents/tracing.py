"""OpenTelemetry tracing of runs, following the GenAI semantic conventions.

    import pyox_agents.tracing

    pyox_agents.tracing.enable()                  # the global tracer provider
    pyox_agents.tracing.enable(provider, capture_content=True)

Once enabled, every run makes an `invoke_agent {agent}` span, each of its model requests a
`chat {model}` span and each tool call an `execute_tool {tool}` span, both children of the run's;
a subagent's run nests under the tool call that started it. Spans carry
`gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.conversation.id` (the thread id),
`gen_ai.request.model`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, the token usage and, for
what failed, status ERROR with `error.type`. A run that pauses for a person ends its span with
`pyox_agents.run.outcome = "interrupt"`; its resume is a span of its own.

Off by default, and free when off: nothing of OpenTelemetry is imported until `enable`. Needs
the `otel` extra: `pip install "pyox-agents[otel]"`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyox_agents.runtime import _tracing

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = ["disable", "enable", "enabled"]


def enable(tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
           ) -> None:
    """Trace every run that starts from now on, in this process.

    Args:
        tracer_provider: where the spans go; by default OpenTelemetry's global provider (set
            with `opentelemetry.trace.set_tracer_provider`).
        capture_content: also record what the model was given and answered
            (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`)
            and each tool call's arguments and result. Off by default: messages may hold what
            your users wrote; turn it on only where your traces may keep that.

    Raises:
        ImportError: `opentelemetry-api` is not installed; install it with
            `pip install "pyox-agents[otel]"`.
    """
    _tracing.enable(tracer_provider, capture_content=capture_content)


def disable() -> None:
    """Stop tracing: runs that start from now on make no spans (the default)."""
    _tracing.disable()


def enabled() -> bool:
    """Whether runs are traced now."""
    return _tracing.on is not None
