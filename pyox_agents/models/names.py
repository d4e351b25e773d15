"""Model names: `resolve_model` turns `Agent(model="openai:gpt-5-mini")` into a `Model`.

A provider's module (and its SDK) is imported only when a name asks for that provider, so the
SDKs stay optional and nothing here is imported by the providers: no import cycle.
"""

from __future__ import annotations

import re

from pyox_agents.models.base import Model

__all__ = ["MODEL_FORMS", "resolve_model"]

MODEL_FORMS = (
    '"openai:<model>" (OpenAI, or the server at OPENAI_BASE_URL), '
    '"ollama:<model>" (Ollama at http://127.0.0.1:11434/v1), '
    '"anthropic:<model>", a bare OpenAI name ("gpt-5-mini", "o4-mini"), '
    'a bare Claude name ("claude-sonnet-4-5") or "demo" (the offline demo model)')
"""The model names `resolve_model` accepts, as error messages list them."""

_BARE_OPENAI = re.compile(r"^(gpt-|chatgpt-|o\d)")


def resolve_model(model: Model | str) -> Model:
    """The `Model` an `Agent(model=...)` argument names.

    Names: "openai:<model>" and bare OpenAI names ("gpt-5-mini", "o4-mini") use the OpenAI
    Chat Completions API (`OPENAI_API_KEY`, `OPENAI_BASE_URL`); "ollama:<model>" the same API
    at Ollama's default address, with no key; "anthropic:<model>" and bare "claude-..." names
    the Anthropic Messages API (`ANTHROPIC_API_KEY`); "demo" the offline `DemoModel`. The
    provider modules are imported only when named, so their SDKs stay optional.

    Raises:
        ValueError: `model` is a name none of these forms matches.
        ImportError: the provider's SDK is not installed (the message names the pip command).
        TypeError: `model` is neither a `Model` nor a str.
    """
    if isinstance(model, str):
        return _model_named(model)
    if not isinstance(model, Model):
        raise TypeError(
            f"Agent(model=...) must be a Model or a model name, got {type(model).__name__}")
    return model


def _model_named(name: str) -> Model:
    text = name.strip()
    if text == "demo":
        from pyox_agents.models.demo import DemoModel

        return DemoModel()
    provider, sep, rest = text.partition(":")
    provider, rest = provider.lower(), rest.strip()
    if not sep and _BARE_OPENAI.match(text):
        provider, rest = "openai", text
    elif not sep and text.startswith("claude-"):
        provider, rest = "anthropic", text
    elif sep and provider in _EXAMPLES and not rest:
        raise ValueError(
            f"model {name!r} names the {provider} provider but no model: write "
            f'"{provider}:<model>", such as {_EXAMPLES[provider]!r}')
    if not rest or provider not in _EXAMPLES:
        raise ValueError(
            f"no provider configured for model {name!r}: use {MODEL_FORMS}; or pass a Model "
            "object, such as OpenAIModel(name, base_url=...) for another OpenAI-compatible "
            "server")
    if provider == "anthropic":
        from pyox_agents.models.anthropic import AnthropicModel

        return AnthropicModel(rest)
    from pyox_agents.models.openai import OLLAMA_BASE_URL, OpenAIModel

    if provider == "ollama":
        return OpenAIModel(rest, base_url=OLLAMA_BASE_URL, provider="ollama")
    return OpenAIModel(rest)


_EXAMPLES = {"openai": "openai:gpt-5-mini", "ollama": "ollama:llama3.2",
             "anthropic": "anthropic:claude-sonnet-4-5"}
