"""Type hints and docstrings -> JSON Schema (pure Python, no runtime needed)."""

from __future__ import annotations

import dataclasses
import enum
import sys
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, TypedDict

import pytest

import codemode
from codemode._schema import function_schema, parse_docstring, type_schema


class Units(enum.Enum):
    C = "c"
    F = "f"


class Place(TypedDict):
    city: str
    country: str


@dataclasses.dataclass
class Window:
    """A time window."""

    start: int
    end: int = 0


def test_schema_from_hints_and_google_docstring() -> None:
    def get_weather(city: str, days: int = 1, units: Units = Units.C, detailed: bool = False) -> Dict[str, float]:
        """Current weather for a city.

        Args:
            city: The city name, e.g. "Paris".
            days: How many days
                of forecast.
        """
        raise AssertionError

    schema, output, description = function_schema(get_weather)
    assert description == "Current weather for a city."
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": 'The city name, e.g. "Paris".'},
            "days": {"type": "integer", "description": "How many days of forecast.", "default": 1},
            "units": {"enum": ["c", "f"], "type": "string"},
            "detailed": {"type": "boolean", "default": False},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert output == {"type": "object", "additionalProperties": {"type": "number"}}


def test_schema_of_containers_unions_and_records() -> None:
    assert type_schema(Optional[int]) == {"type": ["integer", "null"]}
    assert type_schema(List[str]) == {"type": "array", "items": {"type": "string"}}
    assert type_schema(Tuple[int, str]) == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert type_schema(Literal["a", "b"]) == {"enum": ["a", "b"], "type": "string"}
    assert type_schema(Optional[Literal["a"]]) == {"enum": ["a", None], "type": ["string", "null"]}
    assert type_schema(Annotated[int, "how many"]) == {"type": "integer", "description": "how many"}
    assert type_schema(Any) == {}
    assert type_schema(Place) == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "additionalProperties": False,
    }
    assert type_schema(Window) == {
        "type": "object",
        "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
        "required": ["start"],
        "additionalProperties": False,
        "description": "A time window.",
    }
    if sys.version_info >= (3, 10):
        assert type_schema(eval("int | None")) == {"type": ["integer", "null"]}


def test_rest_and_numpy_docstrings() -> None:
    summary, params = parse_docstring(
        """Adds numbers.

        :param a: the first
            number
        :param int b: the second
        :returns: the sum
        """
    )
    assert summary == "Adds numbers."
    assert params == {"a": "the first number", "b": "the second"}
    summary, params = parse_docstring(
        """Adds numbers.

        Parameters
        ----------
        a : int
            the first
        b : int
            the second
        """
    )
    assert summary == "Adds numbers."
    assert params == {"a": "the first", "b": "the second"}


def test_kwargs_allow_extra_fields_and_positional_only_is_refused() -> None:
    def loose(a: int, **rest: Any) -> None: ...

    schema, output, _ = function_schema(loose)
    assert "additionalProperties" not in schema and output is None

    def strict(a: int, /) -> None: ...

    with pytest.raises(TypeError, match="positional-only"):
        codemode.tool(strict)


def test_explicit_schemas_win() -> None:
    @codemode.tool(
        name="lookup",
        description="Looks things up.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        output_schema={"type": "object", "properties": {"hits": {"type": "integer"}}},
        read_only=True,
    )
    def anything(**kwargs: Any) -> Any: ...

    spec = anything.spec()
    assert spec["name"] == "lookup" and spec["description"] == "Looks things up."
    assert spec["parameters"]["required"] == ["q"]
    assert spec["outputSchema"] == {"type": "object", "properties": {"hits": {"type": "integer"}}}
    assert spec["annotations"] == {"readOnlyHint": True}
    assert anything.catalog_id == "openclaw:core:lookup"
