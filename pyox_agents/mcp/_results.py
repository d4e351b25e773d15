"""What an MCP call gives the model: its result as JSON or text, its error as an exception;
and the `Tool` an MCP tool becomes, its arguments checked against the server's JSON schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import mcp_types

from pyox_agents.tools import Tool, ToolArgumentsError, ToolError


class MCPToolError(ToolError):
    """An MCP tool's error result (`isError`), or the server refusing a call: the model and
    the person read the message as it is (the server wrote it as the tool's result)."""


@dataclass(frozen=True, slots=True)
class MCPTool(Tool):
    """A tool of an MCP server: its arguments are checked against the server's JSON schema."""

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check the model's arguments against the tool's input schema.

        Raises:
            ToolArgumentsError: naming each problem, for the model to read.
        """
        try:
            validator = jsonschema.validators.validator_for(self.parameters)(self.parameters)
            errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
        except jsonschema.SchemaError:
            return dict(arguments)  # the server's schema is not valid: the server checks
        if errors:
            problems = "; ".join(
                f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in errors)
            raise ToolArgumentsError(f"invalid arguments for tool {self.name!r}: {problems}; "
                                     "call it again with arguments that match its schema")
        return dict(arguments)


def to_result(result: mcp_types.CallToolResult) -> Any:
    """A call's result as the model reads it: the structured content, else the text."""
    text = "\n".join(_block_text(block) for block in result.content)
    if result.is_error:
        raise MCPToolError(text or "the tool failed without saying why")
    if result.structured_content is not None:
        return result.structured_content
    return text


def _block_text(block: Any) -> str:
    match block:
        case mcp_types.TextContent(text=text):
            return text
        case mcp_types.ImageContent() | mcp_types.AudioContent():
            size = len(block.data) * 3 // 4 - block.data[-2:].count("=")  # base64's length
            return f"[{block.mime_type} {block.type}, {size} bytes, not shown]"
        case mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents(text=text)):
            return text
        case mcp_types.EmbeddedResource(resource=resource):
            kind = resource.mime_type or "binary"
            return f"[{kind} resource {resource.uri}, not shown]"
        case mcp_types.ResourceLink(uri=uri):
            return f"[resource {uri}]"
    return f"[{getattr(block, 'type', 'unknown')} content, not shown]"
