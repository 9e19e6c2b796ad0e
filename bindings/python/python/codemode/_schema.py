"""JSON Schema from Python type hints and docstrings, and Python values to JSON.

Only what a tool signature needs: primitives, ``Optional``/``Union``, ``Literal``, ``Enum``, lists,
tuples, dicts, ``TypedDict``, dataclasses, pydantic models (``model_json_schema``) and
``Annotated[T, "description"]``. Anything else becomes ``{}`` (any JSON value).
"""

from __future__ import annotations

import asyncio
import collections.abc
import concurrent.futures
import dataclasses
import datetime
import enum
import inspect
import json
import re
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

JsonObject = Dict[str, Any]

_UNION_TYPES: Tuple[Any, ...] = (typing.Union,)
if hasattr(__import__("types"), "UnionType"):  # Python >= 3.10: `int | None`
    _UNION_TYPES = (typing.Union, getattr(__import__("types"), "UnionType"))

_ARRAY_ORIGINS = (
    list,
    set,
    frozenset,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Set,
    collections.abc.MutableSet,
    collections.abc.Iterable,
    collections.abc.Collection,
)
_OBJECT_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
_AWAITABLE_ORIGINS = (
    asyncio.Future,
    concurrent.futures.Future,
    collections.abc.Awaitable,
    collections.abc.Coroutine,
)


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _is_pydantic(tp: Any) -> bool:
    return isinstance(tp, type) and callable(getattr(tp, "model_json_schema", None))


def _json_type(value: Any) -> Optional[str]:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


def _nullable(schema: JsonObject) -> JsonObject:
    if not schema:
        return schema
    if "enum" in schema:
        values = list(schema["enum"])
        out = dict(schema)
        out["enum"] = values if None in values else values + [None]
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        return out
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    if "anyOf" in schema:
        return {**schema, "anyOf": list(schema["anyOf"]) + [{"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def _hints(obj: Any) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        return dict(getattr(obj, "__annotations__", {}) or {})


def type_schema(tp: Any) -> JsonObject:
    """The JSON Schema of a type hint (``{}`` when the hint says nothing JSON can check)."""
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        base = type_schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**base, "description": notes[0]} if notes else base
    if origin in _UNION_TYPES:
        members = [a for a in args if a is not type(None)]
        schemas = [type_schema(a) for a in members]
        if any(not s for s in schemas):
            return {}
        union: JsonObject = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        return _nullable(union) if len(members) < len(args) else union
    if origin is typing.Literal:
        values = list(args)
        literal: JsonObject = {"enum": values}
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            literal["type"] = kinds.pop()
        return literal
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp in (str, bytes):
        return {"type": "string"}
    if tp in (datetime.datetime, datetime.date, datetime.time):
        return {"type": "string", "format": {datetime.datetime: "date-time", datetime.date: "date"}.get(tp, "time")}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        members_enum: JsonObject = {"enum": [m.value for m in tp]}
        enum_kinds = {_json_type(m.value) for m in tp}
        if len(enum_kinds) == 1 and None not in enum_kinds:
            members_enum["type"] = enum_kinds.pop()
        return members_enum
    if origin is tuple or tp is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
        items = [type_schema(a) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if origin in _ARRAY_ORIGINS or tp in (list, set, frozenset):
        if args:
            item = type_schema(args[0])
            return {"type": "array", "items": item} if item else {"type": "array"}
        return {"type": "array"}
    if origin in _OBJECT_ORIGINS or tp is dict:
        if len(args) == 2:
            value = type_schema(args[1])
            if value:
                return {"type": "object", "additionalProperties": value}
        return {"type": "object"}
    if origin in _AWAITABLE_ORIGINS:
        return type_schema(args[-1]) if args else {}
    if _is_pydantic(tp):
        return dict(tp.model_json_schema())
    if _is_typeddict(tp):
        hints = _hints(tp)
        required = [k for k in hints if k in getattr(tp, "__required_keys__", frozenset())]
        out: JsonObject = {"type": "object", "properties": {k: type_schema(v) for k, v in hints.items()}}
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        return _with_doc(out, tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = _hints(tp)
        props: JsonObject = {}
        required_fields: List[str] = []
        for field in dataclasses.fields(tp):
            if not field.init:
                continue
            props[field.name] = type_schema(hints.get(field.name, field.type))
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                required_fields.append(field.name)
        dc: JsonObject = {"type": "object", "properties": props}
        if required_fields:
            dc["required"] = required_fields
        dc["additionalProperties"] = False
        return _with_doc(dc, tp)
    return {}


def _with_doc(schema: JsonObject, tp: type) -> JsonObject:
    doc = tp.__dict__.get("__doc__")  # not inherited: a TypedDict would describe itself as `dict`
    # dataclasses get a generated `Name(field: type, ...)` docstring; it says nothing new.
    if doc and not doc.startswith(f"{tp.__name__}("):
        schema["description"] = parse_docstring(doc)[0]
    return schema


_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns?|Yields?|Raises|"
    r"Examples?|Notes?|Attributes|See Also|Warnings?|Todo)\s*:?\s*$"
)
_GOOGLE_PARAM = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_NUMPY_PARAM = re.compile(r"^(\w+)\s*(?::.*)?$")
_PARAM_SECTIONS = ("args", "arguments", "parameters", "params", "keyword args", "keyword arguments")


def parse_docstring(doc: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """``(summary, {param: description})`` from a Google, reST or NumPy style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: List[str] = []
    params: Dict[str, str] = {}
    section: Optional[str] = None
    numpy_style = False
    base_indent: Optional[int] = None
    current: Optional[str] = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        underline = i + 1 < len(lines) and len(lines[i + 1].strip()) > 2 and set(lines[i + 1].strip()) == {"-"}
        header = _SECTION.match(stripped)
        if header and indent == 0 and (stripped.endswith(":") or underline):
            section, numpy_style, base_indent, current = header.group(1).lower(), underline, None, None
            i += 2 if underline else 1
            continue
        rest = _REST_PARAM.match(stripped)
        if rest:
            section, current = "rest", rest.group(1)
            params[current] = rest.group(2).strip()
        elif stripped.startswith(":") and section in (None, "rest"):
            section, current = "rest-other", None
        elif section is None:
            summary.append(line)
        elif section in _PARAM_SECTIONS and stripped:
            if base_indent is None:
                base_indent = indent
            if indent <= base_indent:
                match = (_NUMPY_PARAM if numpy_style else _GOOGLE_PARAM).match(stripped)
                current = match.group(1) if match else None
                if current:
                    params[current] = "" if numpy_style else match.group(3).strip()  # type: ignore[union-attr]
            elif current:
                params[current] = (params[current] + " " + stripped).strip()
        elif section == "rest" and current and indent > 0 and stripped:
            params[current] = (params[current] + " " + stripped).strip()
        i += 1
    return "\n".join(summary).strip(), params


def function_schema(fn: Callable[..., Any]) -> Tuple[JsonObject, Optional[JsonObject], str]:
    """``(input_schema, output_schema or None, description)`` of a callable's signature."""
    sig = inspect.signature(fn)
    hints = _hints(fn)
    description, docs = parse_docstring(inspect.getdoc(fn))
    properties: JsonObject = {}
    required: List[str] = []
    extra = False
    for name, param in sig.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"tool {getattr(fn, '__name__', fn)!r}: positional-only parameter {name!r} cannot be "
                "passed by name; tools are called with keyword arguments"
            )
        schema = type_schema(hints.get(name, param.annotation))
        if docs.get(name) and "description" not in schema:
            schema = {**schema, "description": docs[name]}
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None:
            try:
                json.dumps(param.default, allow_nan=False)
                schema = {**schema, "default": param.default}
            except (TypeError, ValueError):
                pass
        properties[name] = schema
    input_schema: JsonObject = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if not extra:
        input_schema["additionalProperties"] = False
    output: Optional[JsonObject] = None
    if "return" in hints and hints["return"] not in (None, type(None), Any):
        output = type_schema(hints["return"]) or None
    return input_schema, output, description


def coerce_arguments(fn: Callable[..., Any], arguments: Dict[str, Any]) -> Dict[str, Any]:
    """Builds dataclass, pydantic and Enum parameters from their JSON values."""
    hints = _hints(fn)
    out = dict(arguments)
    for name, value in arguments.items():
        tp = hints.get(name)
        if tp is None or value is None:
            continue
        if typing.get_origin(tp) is typing.Annotated:
            tp = typing.get_args(tp)[0]
        if typing.get_origin(tp) in _UNION_TYPES:
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                continue
            tp = members[0]
        if _is_pydantic(tp) and isinstance(value, dict):
            out[name] = tp.model_validate(value)
        elif dataclasses.is_dataclass(tp) and isinstance(tp, type) and isinstance(value, dict):
            out[name] = tp(**value)
        elif isinstance(tp, type) and issubclass(tp, enum.Enum):
            out[name] = tp(value)
    return out


def _default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    raise TypeError(f"a {type(value).__name__} is not JSON")


def dumps(value: Any) -> str:
    """Compact JSON text of a Python value (dataclasses, pydantic models, enums, sets included)."""
    return json.dumps(value, default=_default, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
