"""Helpers for tests of the bridge to Vela.

`vela_fields` turns a Vela API object (an `NpuOperation`, a feature map, a tile box...) into
plain nested values, so that two objects built apart compare equal exactly when every field
does: Vela's classes compare by identity.
"""

from __future__ import annotations

import enum


def vela_fields(value: object) -> object:
    """A comparable structure of every field of a Vela object (recursively)."""
    if isinstance(value, enum.Enum | str | int | float | type(None)):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # NamedTuple
        return (type(value).__name__, *(vela_fields(v) for v in value))
    if isinstance(value, list | tuple):
        return [vela_fields(v) for v in value]
    return {"class": type(value).__name__} | {k: vela_fields(v) for k, v in vars(value).items()}
