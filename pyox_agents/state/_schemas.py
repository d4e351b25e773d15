"""A person's answer checked against the JSON Schema its question gave (`ctx.ask_person(prompt,
schema=...)`), by `jsonschema`: one check, made where a paused run resumes, so an answer is held
to its schema whichever way it came (AG-UI, the AI SDK, `Agent.resume`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
import jsonschema.validators

from pyox_agents.state._pointers import pointer

__all__ = ["answer_problems", "schema_problem"]

_SHOWN = 5
"""How many of an answer's problems a refusal names (the first ones, by place)."""


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """What is wrong with `schema` as a JSON Schema (its `$schema` draft, else 2020-12), or
    None when it is one."""
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"{exc.message} (at {_where(exc.absolute_path, 'the schema')})"
    return None


def answer_problems(answer: Any, schema: Mapping[str, Any]) -> list[str]:
    """What is wrong with `answer` for `schema` (empty: it fits), each problem with its place,
    e.g. "the answer at /size: 'XXL' is not one of ['S', 'M', 'L']"."""
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator)
    errors = sorted(validator_class(schema).iter_errors(answer),
                    key=lambda error: [str(part) for part in error.absolute_path])
    return [f"{_where(error.absolute_path, 'the answer')}: {error.message}"
            for error in errors[:_SHOWN]]


def _where(path: Any, whole: str) -> str:
    return f"{whole} at {pointer(path)}" if path else whole
