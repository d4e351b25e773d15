"""Model names: which provider each form picks, and the errors for the others."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pyox_agents import Agent
from pyox_agents.models import DemoModel, ScriptedModel, resolve_model
from pyox_agents.models.anthropic import AnthropicModel
from pyox_agents.models.openai import OpenAIModel


@pytest.mark.parametrize(
    ("name", "kind", "full_name"),
    [
        ("gpt-5-mini", OpenAIModel, "openai:gpt-5-mini"),
        ("o4-mini", OpenAIModel, "openai:o4-mini"),
        ("openai:gpt-5-mini", OpenAIModel, "openai:gpt-5-mini"),
        ("openai:my-finetune", OpenAIModel, "openai:my-finetune"),
        ("ollama:qwen3:8b", OpenAIModel, "ollama:qwen3:8b"),
        ("anthropic:claude-haiku-4-5", AnthropicModel, "anthropic:claude-haiku-4-5"),
        ("claude-haiku-4-5", AnthropicModel, "anthropic:claude-haiku-4-5"),
        ("demo", DemoModel, "demo"),
    ],
)
def test_each_accepted_name_form_picks_its_provider(name: str, kind: type, full_name: str) -> None:
    model = resolve_model(name)
    assert isinstance(model, kind)
    assert model.name == full_name


def test_resolving_a_name_needs_no_key_yet() -> None:
    assert isinstance(resolve_model("openai:gpt-5-mini"), OpenAIModel)  # no OPENAI_API_KEY set


def test_a_model_object_is_used_as_it_is() -> None:
    model = ScriptedModel(["hi"])
    assert resolve_model(model) is model


@pytest.mark.parametrize("name", ["mistral-large", "google:gemini-2.5-pro", "", "llama3.2"])
def test_an_unknown_name_lists_the_accepted_forms(name: str) -> None:
    with pytest.raises(ValueError, match="no provider configured for model") as error:
        resolve_model(name)
    for form in ('"openai:<model>"', '"ollama:<model>"', '"anthropic:<model>"', '"demo"'):
        assert form in str(error.value)


def test_a_provider_without_a_model_name_says_how_to_write_one() -> None:
    with pytest.raises(ValueError, match=r'write "ollama:<model>"'):
        resolve_model("ollama:")


def test_a_non_model_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="must be a Model or a model name"):
        resolve_model(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("package", "name"), [("openai", "openai:gpt-5-mini"), ("anthropic", "claude-haiku-4-5")]
)
def test_a_missing_sdk_names_the_pip_command(package: str, name: str) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules[{package!r}] = None  # as if the extra were not installed
        from pyox_agents import Agent
        agent = Agent(model={name!r})  # naming the model needs no SDK yet
        try:
            agent.run("hi")
        except ImportError as exc:
            print(exc)
        else:
            print("no error")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert f'pip install "pyox-agents[{package}]"' in done.stdout, done.stdout + done.stderr


def test_the_demo_name_runs_offline() -> None:
    result = Agent(model="demo").run("hello")
    assert "demo model" in result.answer
