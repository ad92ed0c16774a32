"""Where a JSON value breaks a JSON Schema: the subset that the HTTTX spec and the game
server's OpenAPI 3.1 document use.

jsonschema is not a dependency of the project, and these documents need only this much.
A keyword outside the subset is reported as a problem rather than skipped, so a schema
this cannot check never passes unchecked.
"""

from __future__ import annotations

import re
from typing import Any

Json = dict[str, Any]

#: Keywords that describe and never constrain.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "format", "examples", "discriminator", "deprecated"}
)
_CHECKED = frozenset(
    {
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "type",
        "const",
        "enum",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
    }
)
_KINDS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_problems(value: Any, schema: Json | bool, document: Json, path: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema``; ``$ref`` is resolved in ``document``."""
    if isinstance(schema, bool):
        return [] if schema else [f"{path}: nothing is allowed here, got {value!r}"]
    unknown = set(schema) - _CHECKED - _ANNOTATIONS
    if unknown:
        return [f"{path}: the schema uses {sorted(unknown)}, which this check does not know"]
    if "$ref" in schema:
        target: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return schema_problems(value, target, document, path)
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_KINDS[k](value) for k in kinds):
            return [f"{path}: expected {kind}, got {value!r}"]
    problems: list[str] = []
    for sub in schema.get("allOf", []):
        problems += schema_problems(value, sub, document, path)
    for keyword, wanted in (("anyOf", range(1, 1 << 30)), ("oneOf", range(1, 2))):
        if keyword in schema:
            fits = sum(not schema_problems(value, sub, document, path) for sub in schema[keyword])
            if fits not in wanted:
                problems.append(f"{path}: {value!r} fits {fits} of the {keyword} schemas")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: expected {schema['const']!r}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: expected one of {schema['enum']}, got {value!r}")
    if isinstance(value, str):
        problems += _string_problems(value, schema, path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        problems += _number_problems(value, schema, path)
    if isinstance(value, dict):
        problems += _object_problems(value, schema, document, path)
    if isinstance(value, list):
        problems += _array_problems(value, schema, document, path)
    return problems


def _string_problems(value: str, schema: Json, path: str) -> list[str]:
    problems = []
    if "pattern" in schema and not re.search(schema["pattern"], value):
        problems.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if len(value) < schema.get("minLength", 0):
        problems.append(f"{path}: {value!r} is shorter than {schema['minLength']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        problems.append(f"{path}: {value!r} is longer than {schema['maxLength']}")
    return problems


def _number_problems(value: float, schema: Json, path: str) -> list[str]:
    problems = []
    if "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{path}: {value!r} is below {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        problems.append(f"{path}: {value!r} is above {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        problems.append(f"{path}: {value!r} is not above {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        problems.append(f"{path}: {value!r} is not below {schema['exclusiveMaximum']}")
    return problems


def _object_problems(value: Json, schema: Json, document: Json, path: str) -> list[str]:
    problems = [
        f"{path}: missing {name!r}" for name in schema.get("required", []) if name not in value
    ]
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}"
        if name in properties:
            problems += schema_problems(item, properties[name], document, where)
        else:
            problems += schema_problems(item, extra, document, where)
    return problems


def _array_problems(value: list[Any], schema: Json, document: Json, path: str) -> list[str]:
    problems = []
    if len(value) < schema.get("minItems", 0):
        problems.append(f"{path}: {len(value)} items, fewer than {schema['minItems']}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        problems.append(f"{path}: {len(value)} items, more than {schema['maxItems']}")
    prefix = schema.get("prefixItems", [])
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        if index < len(prefix):
            problems += schema_problems(item, prefix[index], document, where)
        elif "items" in schema:
            problems += schema_problems(item, schema["items"], document, where)
    return problems
