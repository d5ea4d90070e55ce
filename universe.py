"""The `xdsl.universe` plugin: makes our dialects and passes visible to every xDSL tool.

pyproject.toml points the `xdsl.universe` entry point here, so plain `xdsl-opt -p cascade-plan`
works. Dialect factories import inside the function: xDSL tools load every universe at startup.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.universe import Universe

from cascade.passes import get_all_passes


def _nn() -> Dialect:
    from cascade.dialects.nn import NN

    return NN


def _cascade() -> Dialect:
    from cascade.dialects.cascade import Cascade

    return Cascade


def _ethosu() -> Dialect:
    from cascade.dialects.ethosu import EthosU

    return EthosU


def _tosa() -> Dialect:
    from cascade.dialects.tosa import TOSA

    return TOSA


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Map each of our dialect names to a factory that imports and returns the dialect."""
    return {"nn": _nn, "cascade": _cascade, "ethosu": _ethosu}


def get_dialect_overrides() -> dict[str, Callable[[], Dialect]]:
    """Our replacements for xDSL dialects of the same name: `tosa` with conv2d, reshape, slice...

    Not part of CASCADE_UNIVERSE: a second "tosa" there would clash with xDSL's own. Our tools
    register these in place of xDSL's instead.
    """
    return {"tosa": _tosa}


CASCADE_UNIVERSE = Universe(all_dialects=get_all_dialects(), all_passes=get_all_passes())
