"""The planner's view of a program: operators, their tensors and access relations.

Built from `nn` IR by the cascade-plan pass; plain data, so the search and the cost
models never touch IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cascade.dialects.access import AccessRelation


@dataclass(frozen=True)
class TensorInfo:
    """A tensor of the program: its shape and element size."""

    name: str
    shape: tuple[int, ...]
    element_bytes: int = 1

    @property
    def bytes(self) -> int:
        size = self.element_bytes
        for extent in self.shape:
            size *= extent
        return size


@dataclass(frozen=True)
class OpInfo:
    """One operator: what it computes, what it reads, and how.

    `kind` is the `nn` operator name without the dialect prefix ("conv2d", "add", ...).
    `inputs` are the activation tensors (not weights), each with the access relation from
    an output region to the region of that input it reads. `weights` are the constant
    operands (weights, bias) with their relations. `attributes` holds the operator's
    parameters as plain Python values: kernel (kh, kw), stride, dilation, padding
    (top, left, bottom, right), activation, pool kind, quantization scales, ...
    """

    name: str
    kind: str
    output: TensorInfo
    inputs: tuple[TensorInfo, ...]
    input_relations: tuple[AccessRelation, ...]
    weights: tuple[TensorInfo, ...] = ()
    weight_relations: tuple[AccessRelation, ...] = ()
    attributes: dict[str, object] = field(default_factory=dict, hash=False, compare=False)

    @property
    def macs(self) -> int:
        """Multiply-accumulates for the whole output, when the operator has weights."""
        value = self.attributes.get("macs", 0)
        return int(value) if isinstance(value, int) else 0
