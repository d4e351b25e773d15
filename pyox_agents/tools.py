"""Tools: `@tool` turns a function into something the model can call.

The tool's name and description come from the function and its docstring, the JSON schema of its
arguments from its signature (through pydantic). An optional first parameter `ctx: RunContext`
gives the tool the run's shared state (`ctx.state`) and ids. Sync tools run in anyio's worker
threads (`anyio.to_thread.run_sync`), async tools on the event loop.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

import anyio
import anyio.to_thread
import pydantic

from pyox_agents._errors import ToolError
from pyox_agents._run_context import PersonDeclined, PersonNeeded, Preliminary, RunContext
from pyox_agents._tool_docs import parse_docstring
from pyox_agents.models.base import ToolSpec
from pyox_agents.state._validation import describe_problems

__all__ = [
    "PersonDeclined",
    "PersonNeeded",
    "RunContext",
    "Tool",
    "ToolArgumentsError",
    "ToolError",
    "make_tool",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])


class ToolArgumentsError(ToolError, ValueError):
    """The model called a tool with arguments that do not fit its signature; the message names
    each problem, for the model to read (a `ToolError`)."""


@dataclass(frozen=True, slots=True)
class Tool:
    """A function the model can call. Make one with `@tool`.

    `idempotent` tools may be run again safely: on a conflicting state change they are re-run on
    the new version instead of failing. `approval` tools wait for a person before they run.
    `predict_state` maps shared-state keys to arguments of this tool: a client that predicts
    state (AG-UI `PredictState`) writes each argument into its key while the model streams it.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    takes_ctx: bool = False
    idempotent: bool = False
    approval: bool = False
    timeout: float | None = None
    predict_state: Mapping[str, str] = field(default_factory=dict)
    _arguments: type[pydantic.BaseModel] = field(default=pydantic.BaseModel, repr=False)

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(self.name, self.description, self.parameters)

    @property
    def is_async(self) -> bool:
        """Whether the function is a coroutine or async generator function (run on the loop,
        not in a thread)."""
        return inspect.iscoroutinefunction(self.function) or self.streams

    @property
    def streams(self) -> bool:
        """Whether the function is an async generator: each value it yields is a preliminary
        result, and the last one its result."""
        return inspect.isasyncgenfunction(self.function)

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check the model's arguments against the signature and convert them.

        Raises:
            ToolArgumentsError: a message naming each field that is wrong, for the model to read.
        """
        try:
            parsed = self._arguments.model_validate(dict(arguments))
        except pydantic.ValidationError as exc:
            problems = describe_problems(exc, root="arguments", say=_SAID)
            raise ToolArgumentsError(f"invalid arguments for tool {self.name!r}: {problems}; "
                                     "call it again with arguments that match its schema") from None
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    async def call(self, ctx: RunContext, arguments: Mapping[str, Any]) -> Any:
        """Run the tool with validated `arguments`: on the loop if async, else in a thread."""
        args = (ctx,) if self.takes_ctx else ()
        if self.streams:
            return await self._last_yielded(ctx, self.function(*args, **arguments))
        if self.is_async:
            return await self.function(*args, **arguments)
        return await _in_a_thread(self.function, args, arguments)

    async def _last_yielded(self, ctx: RunContext, values: Any) -> Any:
        last = None
        async with contextlib.aclosing(values):
            async for value in values:
                if ctx._send is not None:
                    ctx._send(Preliminary(value))
                last = value
        return last

    async def __call__(self, ctx: RunContext, arguments: Mapping[str, Any]) -> Any:
        return await self.call(ctx, arguments)


async def _in_a_thread(function: Callable[..., Any], args: tuple[Any, ...],
                       arguments: Mapping[str, Any]) -> Any:
    """Run a sync tool in one of anyio's worker threads, each call in its own.

    A cancelled call (the tool's timeout, a stop) is abandoned where it is: the caller goes on
    at once and the thread's slot is given back, while the function runs to its end in its
    thread and its result is dropped. The tool can see that with
    `anyio.from_thread.check_cancelled()`: for anyio's cancellation (a timeout) anyio does
    that; for a task's own (`Task.cancel()`, a stopped run) the scope around the call is
    cancelled here as the call is left, which the thread's check finds.
    """

    @functools.wraps(function)  # the thread runs the tool, by its name
    def call() -> Any:
        try:
            return function(*args, **arguments)
        except GeneratorExit as exc:  # handed back as a value: see `_Exited`
            return _Exited(exc)

    scope = anyio.CancelScope()
    try:
        with scope:
            outcome = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        scope.cancel()
        raise
    if isinstance(outcome, _Exited):
        raise outcome.exit
    return outcome


@dataclass(frozen=True, slots=True)
class _Exited:
    """A `GeneratorExit` a sync tool raised, raised again by its caller on the loop: a task
    that is handed one as a future's error throws it into its coroutine, which closes every
    frame on the way instead of raising it where it can be caught."""

    exit: GeneratorExit


_SAID = {"extra_forbidden": "no such argument"}
"""Pydantic error types a tool words itself, for the model to read."""


@overload
def tool(function: F, /) -> Tool: ...


@overload
def tool(*, name: str | None = None, description: str | None = None, idempotent: bool = False,
         approval: bool = False, timeout: float | None = None,
         predict_state: Mapping[str, str] | None = None) -> Callable[[F], Tool]: ...


def tool(function: F | None = None, /, *, name: str | None = None,
         description: str | None = None, idempotent: bool = False, approval: bool = False,
         timeout: float | None = None, predict_state: Mapping[str, str] | None = None,
         ) -> Tool | Callable[[F], Tool]:
    """Make `function` a tool: `@tool` or `@tool(name=..., idempotent=..., approval=...)`.

    `timeout` (seconds) stops a call that runs longer: its result is a timeout error the model
    reads, and the run goes on.

    `predict_state={"document": "text"}` (state key -> argument name) lets a client show the
    argument in its state while the model streams it: before the tool's call starts, the run
    emits `CustomEvent("PredictState", [{"state_key", "tool", "tool_argument"}, ...])`, which
    AG-UI clients (CopilotKit) read. The shared state itself changes when the tool finishes.

    The description is `description`, else the docstring (an "Args:" section describes each
    argument); the schema comes from the type hints. An optional first parameter annotated
    `RunContext` (or named `ctx` without annotation) receives the run context and is not shown
    to the model.

    Raises:
        TypeError: the function has `*args`, `**kwargs` or positional-only parameters, a
            parameter type pydantic cannot describe, or `predict_state` names an argument the
            function does not have.
    """

    def make(fn: F, depth: int = 1) -> Tool:
        caller = sys._getframe(depth).f_locals  # resolves hints naming the caller's local classes
        return make_tool(fn, name=name, description=description, idempotent=idempotent,
                         approval=approval, timeout=timeout, predict_state=predict_state,
                         local=caller)

    return make(function, 2) if function is not None else make


def make_tool(fn: Callable[..., Any], *, name: str | None = None,
              description: str | None = None, idempotent: bool = False, approval: bool = False,
              timeout: float | None = None, predict_state: Mapping[str, str] | None = None,
              local: Mapping[str, Any] | None = None) -> Tool:
    """`@tool` as a plain function, with `local` the namespace to resolve type hints in."""
    tool_name = _checked_name(fn, name, timeout)
    doc, arg_docs = parse_docstring(inspect.getdoc(fn) or "")
    takes_ctx, fields = _fields(fn, tool_name, arg_docs, local)
    predictions = _checked_predictions(tool_name, predict_state, fields)
    try:
        arguments = pydantic.create_model(
            f"{tool_name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False), **fields)
        schema = arguments.model_json_schema()
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError) as exc:
        raise TypeError(f"tool {tool_name!r}: {exc}") from None
    schema.pop("title", None)
    return Tool(name=tool_name, description=description if description is not None else doc,
                parameters=schema, function=fn, takes_ctx=takes_ctx, idempotent=idempotent,
                approval=approval, timeout=timeout, predict_state=predictions,
                _arguments=arguments)


def _checked_name(fn: Callable[..., Any], name: str | None, timeout: float | None) -> str:
    """The tool's name, once `fn`, the name and the timeout are checked."""
    if not callable(fn):
        raise TypeError(f"@tool decorates a function, got {fn!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or timeout <= 0):
        raise ValueError(f"@tool(timeout=...) is a number of seconds > 0, got {timeout!r}")
    tool_name = name or fn.__name__
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool_name):
        raise ValueError(f"tool name {tool_name!r} must be 1 to 64 letters, digits, '_' or '-' "
                         "(what model providers accept); pass @tool(name=...)")
    return tool_name


def _checked_predictions(tool_name: str, predict_state: Mapping[str, str] | None,
                         fields: Mapping[str, Any]) -> dict[str, str]:
    """`predict_state` as a dict, once each key is a state key and each value an argument."""
    if predict_state is None:
        return {}
    where = f"tool {tool_name!r}: @tool(predict_state=...)"
    if not isinstance(predict_state, Mapping):
        raise TypeError(f"{where} maps state keys to argument names, such as "
                        f"{{'document': 'text'}}; got {predict_state!r}")
    for key, argument in predict_state.items():
        if not isinstance(key, str) or not key or not isinstance(argument, str):
            raise TypeError(f"{where}: each state key and argument name is a non-empty str, "
                            f"got {key!r}: {argument!r}")
        if argument not in fields:
            known = ", ".join(repr(name) for name in fields) or "none"
            raise TypeError(f"{where}: state key {key!r} names argument {argument!r}, which "
                            f"the function does not take (its arguments: {known}); name one "
                            "of them")
    return dict(predict_state)


def _fields(fn: Callable[..., Any], tool_name: str, arg_docs: Mapping[str, str],
            local: Mapping[str, Any] | None) -> tuple[bool, dict[str, Any]]:
    """Whether `fn` takes a `ctx` first, and the pydantic fields of its other parameters."""
    try:
        hints = typing.get_type_hints(fn, localns=dict(local or {}), include_extras=True)
    except NameError as exc:
        raise TypeError(f"tool {tool_name!r}: a type hint cannot be resolved ({exc})") from None
    params = list(inspect.signature(fn).parameters.values())
    takes_ctx = bool(params) and _is_context(params[0], hints)
    if takes_ctx:
        params = params[1:]
    fields: dict[str, Any] = {}
    for param in params:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"tool {tool_name!r}: parameter {param.name!r} is "
                            f"{param.kind.description}; tools take named parameters only")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation,
                              pydantic.Field(default, description=arg_docs.get(param.name)))
    return takes_ctx, fields


def _is_context(param: inspect.Parameter, hints: Mapping[str, Any]) -> bool:
    hint = hints.get(param.name)
    if hint is None:
        return param.name == "ctx"
    return hint is RunContext or typing.get_origin(hint) is RunContext
