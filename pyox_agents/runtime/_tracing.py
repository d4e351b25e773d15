"""OpenTelemetry spans of runs, model requests and tool calls, named and described as the GenAI
semantic conventions say, once `pyox_agents.tracing.enable()` was called.

Off by default: `on` is None, the runtime checks only that, and nothing of OpenTelemetry is
imported. Each span is the current span while it lasts, so a model request's `chat` span and a
tool call's `execute_tool` span are children of their run's `invoke_agent` span, a subagent's
run (which runs inside its parent's tool call) nests under that call's span, and an app's own
span around `agent.arun(...)` is the parent of the run's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from pyox_agents.events import ApprovalRequested, RunFailed, RunFinished, RuntimeEvent
from pyox_agents.models.base import Model, ModelRequest
from pyox_agents.runtime._setup import Emit, Setup
from pyox_agents.runtime._tracing_content import input_messages, json_text, output_messages
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Reply, ToolCall, Usage

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = ["RunSpan", "Tracing", "chat_span", "disable", "enable", "on", "run_span", "tool_span"]

@dataclass(frozen=True)
class Tracing:
    """What `enable` set: the tracer spans come from, and whether they carry messages."""

    tracer: Tracer
    capture_content: bool


on: Tracing | None = None
"""The tracing in force, or None (off: the runtime starts no span)."""


def enable(tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
           ) -> None:
    """Start tracing runs (see `pyox_agents.tracing.enable`).

    Raises:
        ImportError: `opentelemetry-api` is not installed (the message says what to install).
    """
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise ImportError(f"tracing needs the OpenTelemetry API, which is not installed ({exc}); "
                          "install it with: pip install 'pyox-agents[otel]'") from exc
    global on
    tracer = trace.get_tracer("pyox_agents", _version(), tracer_provider=tracer_provider)
    on = Tracing(tracer, bool(capture_content))


def disable() -> None:
    """Stop tracing: runs that start from now on make no spans."""
    global on
    on = None


class TracedRun(Protocol):
    """What a run's span reads of its runner."""

    setup: Setup
    model: Model
    conversation: State
    run_id: str
    emit: Emit
    usage: Usage


class RunSpan:
    """The `invoke_agent` span of one run: it learns how the run ended from the run's events."""

    def __init__(self, span: Span, emit: Emit) -> None:
        self.span = span
        self._emit = emit

    def emit(self, events: Sequence[RuntimeEvent]) -> None:
        """Note how the run ended, if these events say so, then pass them on."""
        for event in events:
            if isinstance(event, RunFinished):
                self.span.set_attribute("pyox_agents.run.outcome", event.outcome)
                if event.stopped is not None:
                    self.span.set_attribute("pyox_agents.run.stopped", str(event.stopped))
            elif isinstance(event, ApprovalRequested):
                self.span.set_attribute("pyox_agents.run.paused", True)
                self.span.set_attribute("pyox_agents.run.pending_call_id", event.request.call_id)
            elif isinstance(event, RunFailed):
                self.span.set_attribute("pyox_agents.run.outcome", "failed")
                _set_error(self.span, event.error.code, event.error.message)
        self._emit(events)


@contextmanager
def run_span(run: TracedRun, resumed: bool) -> Iterator[None]:
    """The span of one run (or of its resume), current while it runs; the run's events go
    through it while it is open."""
    assert on is not None
    model = _model_attributes(run.model.name)
    agent = run.setup.name
    attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent",
                                  "gen_ai.conversation.id": run.conversation.id,
                                  "pyox_agents.run.id": run.run_id,
                                  "pyox_agents.run.resumed": resumed, **model}
    if agent:
        attributes["gen_ai.agent.name"] = agent
    name = f"invoke_agent {agent}" if agent else "invoke_agent"
    with _span(on.tracer, name, "INTERNAL", attributes) as span:
        emit = run.emit
        run.emit = RunSpan(span, emit).emit  # every event through the span
        try:
            yield
        except anyio.get_cancelled_exc_class():
            span.set_attribute("pyox_agents.run.outcome", "cancelled")
            raise
        finally:
            run.emit = emit
            _set_usage(span, run.usage)


class _ContentSpan:
    """A span that records messages and results only when `enable(capture_content=True)`."""

    def __init__(self, span: Span, capture_content: bool) -> None:
        self.span = span
        self._capture = capture_content


class ChatSpan(_ContentSpan):
    """The `chat` span of one model request."""

    def replied(self, reply: Reply) -> None:
        """Record what the model answered and what it cost."""
        _set_usage(self.span, reply.usage)
        reason = "tool_call" if reply.tool_calls else "stop"
        self.span.set_attribute("gen_ai.response.finish_reasons", [reason])
        if self._capture:
            self.span.set_attribute("gen_ai.output.messages", output_messages(reply, reason))


@contextmanager
def chat_span(model_name: str, request: ModelRequest, thread_id: str) -> Iterator[ChatSpan]:
    """The span of one model request, current while the model streams its reply."""
    assert on is not None
    model = _model_attributes(model_name)
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat",
                                  "gen_ai.conversation.id": thread_id, **model}
    if on.capture_content:
        system, messages = input_messages(request.messages)
        if system is not None:
            attributes["gen_ai.system_instructions"] = system
        attributes["gen_ai.input.messages"] = messages
    name = f"chat {model['gen_ai.request.model']}"
    with _span(on.tracer, name, "CLIENT", attributes) as span:
        yield ChatSpan(span, on.capture_content)


class ToolSpan(_ContentSpan):
    """The `execute_tool` span of one tool call."""

    def ended(self, outcome: str, result: Any = None, error: str | None = None,
              error_type: str | None = None) -> None:
        """Record how the call ended: `outcome` ("ok", "error", "denied", "paused" for a
        person, "handed_over" to the client), its result or its error."""
        self.span.set_attribute("pyox_agents.tool.outcome", outcome)
        if error is not None:
            kind = error_type or ("denied" if outcome == "denied" else "tool_error")
            _set_error(self.span, kind, error)
        if self._capture and outcome in ("ok", "error", "denied"):
            value = result if error is None else error
            self.span.set_attribute("gen_ai.tool.call.result", json_text(value))


@contextmanager
def tool_span(call: ToolCall, thread_id: str) -> Iterator[ToolSpan]:
    """The span of one tool call, current while it runs (a subagent's run nests in it)."""
    assert on is not None
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool",
                                  "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id,
                                  "gen_ai.tool.type": "function",
                                  "gen_ai.conversation.id": thread_id}
    if on.capture_content:
        raw = call.raw_arguments
        attributes["gen_ai.tool.call.arguments"] = json_text(call.arguments if raw is None else raw)
    with _span(on.tracer, f"execute_tool {call.name}", "INTERNAL", attributes) as span:
        yield ToolSpan(span, on.capture_content)


@contextmanager
def _span(tracer: Tracer, name: str, kind: str, attributes: dict[str, Any]) -> Iterator[Span]:
    """A span current while the body runs; an exception out of the body is recorded on it."""
    from opentelemetry.trace import SpanKind

    span_kind: SpanKind = getattr(SpanKind, kind)
    with tracer.start_as_current_span(name, kind=span_kind, attributes=attributes,
                                      record_exception=False,
                                      set_status_on_exception=False) as span:
        try:
            yield span
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                _set_error(span, "cancelled", "cancelled: the run was stopped")
            else:
                span.record_exception(exc)
                kind_name = f"{type(exc).__module__}.{type(exc).__qualname__}"
                _set_error(span, kind_name, f"{type(exc).__name__}: {exc}")
            raise


def _set_error(span: Span, error_type: str, message: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, message))


def _set_usage(span: Span, usage: Usage) -> None:
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)


def _model_attributes(name: str) -> dict[str, str]:
    """`gen_ai.request.model` (and `gen_ai.provider.name`) from a model's name, such as
    "openai:gpt-5-mini"."""
    provider, colon, model = name.partition(":")
    if not colon:
        return {"gen_ai.request.model": name}
    return {"gen_ai.request.model": model, "gen_ai.provider.name": provider}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyox-agents")
    except PackageNotFoundError:
        return "0"
