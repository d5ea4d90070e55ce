"""Access relations: which input region an output region of an operator reads.

An operator's output region (a box: offset and shape per axis) reads, from each
operand, a box whose first and last corners are affine functions of the output
box's first and last corners:

    first_in[i] = floor(sum_j matrix[i][j] * first_out[j] + first_offset[i])
    last_in[i]  = floor(sum_j matrix[i][j] * last_out[j]  + last_offset[i])

For a 3x3 convolution with stride 2 and top padding 1, the height row is
matrix 2, first offset -1, last offset -1 + 2: output rows 0..3 read input rows
-1..7 (row -1 is padding and is clipped by `input_region`). Fractions express
upscaling: a 2x nearest resize has matrix 1/2, so output rows 0..3 read rows 0..1.
A row of zeros with offsets 0 and size-1 reads the whole axis (a reduction axis,
such as the input channels of a convolution).

This module is pure Python: the planner uses it without any IR types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from math import floor


@dataclass(frozen=True)
class Region:
    """A box in a tensor: `offset[i] <= index[i] < offset[i] + shape[i]`."""

    offset: tuple[int, ...]
    shape: tuple[int, ...]

    @staticmethod
    def full(shape: Sequence[int]) -> Region:
        return Region(tuple(0 for _ in shape), tuple(shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def last(self) -> tuple[int, ...]:
        return tuple(o + s - 1 for o, s in zip(self.offset, self.shape, strict=True))

    @property
    def is_empty(self) -> bool:
        return any(s <= 0 for s in self.shape)

    @property
    def volume(self) -> int:
        if self.is_empty:
            return 0
        volume = 1
        for extent in self.shape:
            volume *= extent
        return volume

    def clip(self, bounds: Sequence[int]) -> Region:
        """Intersect with `[0, bounds)`; an empty intersection has a zero extent."""
        offset = tuple(max(o, 0) for o in self.offset)
        end = tuple(min(o + s, b) for o, s, b in zip(self.offset, self.shape, bounds, strict=True))
        return Region(offset, tuple(max(e - o, 0) for o, e in zip(offset, end, strict=True)))

    def contains(self, other: Region) -> bool:
        return all(
            so <= oo and oo + os <= so + ss
            for so, ss, oo, os in zip(self.offset, self.shape, other.offset, other.shape, strict=True)
        )


Rational = int | Fraction


@dataclass(frozen=True)
class AccessRelation:
    """Affine map from an output box to the box of one operand that it reads."""

    matrix: tuple[tuple[Rational, ...], ...]
    first_offset: tuple[Rational, ...]
    last_offset: tuple[Rational, ...]

    def __post_init__(self) -> None:
        rows = len(self.matrix)
        if len(self.first_offset) != rows or len(self.last_offset) != rows:
            raise ValueError("access relation offsets must have one entry per input axis")
        if len({len(row) for row in self.matrix}) > 1:
            raise ValueError("access relation matrix rows must have equal length")

    @property
    def input_rank(self) -> int:
        return len(self.matrix)

    @property
    def output_rank(self) -> int:
        return len(self.matrix[0]) if self.matrix else 0

    @cached_property
    def _integral(self) -> tuple[tuple[tuple[tuple[int, int], ...], ...], tuple[int, ...], tuple[int, ...]] | None:
        """When every coefficient and offset is a whole number (no upscaling, the common case):
        each row's non-zero (output axis, coefficient) pairs and the offsets, as ints."""
        numbers = [m for row in self.matrix for m in row] + [*self.first_offset, *self.last_offset]
        if any(not isinstance(n, int) and n.denominator != 1 for n in numbers):
            return None
        terms = tuple(tuple((j, int(m)) for j, m in enumerate(row) if m) for row in self.matrix)
        return terms, tuple(int(o) for o in self.first_offset), tuple(int(o) for o in self.last_offset)

    def map_point(self, point: Sequence[int], offsets: Sequence[Rational]) -> tuple[int, ...]:
        return tuple(
            floor(sum((m * p for m, p in zip(row, point, strict=True)), Fraction(0)) + off)
            for row, off in zip(self.matrix, offsets, strict=True)
        )

    def unclipped_input_region(self, output: Region) -> Region:
        """The box read, including positions outside the operand (padding)."""
        if output.is_empty:
            return Region(tuple(0 for _ in self.matrix), tuple(0 for _ in self.matrix))
        integral = self._integral
        if integral is None:
            first = self.map_point(output.offset, self.first_offset)
            last = self.map_point(output.last, self.last_offset)
        else:
            # Whole numbers need neither Fractions nor floor; the planner maps millions of boxes.
            terms, first_offset, last_offset = integral
            start, end = output.offset, output.last
            first = tuple(sum(m * start[j] for j, m in row) + off for row, off in zip(terms, first_offset, strict=True))
            last = tuple(sum(m * end[j] for j, m in row) + off for row, off in zip(terms, last_offset, strict=True))
        return Region(first, tuple(max(hi - lo + 1, 0) for lo, hi in zip(first, last, strict=True)))

    def input_region(self, output: Region, operand_shape: Sequence[int]) -> Region:
        """The box read, clipped to the operand's bounds."""
        return self.unclipped_input_region(output).clip(operand_shape)

    def axis_dependence(self, input_axis: int) -> tuple[int, ...]:
        """The output axes an input axis depends on (non-zero matrix entries)."""
        return tuple(j for j, m in enumerate(self.matrix[input_axis]) if m != 0)


def reads_whole_axis(output_rank: int, size: int) -> tuple[tuple[Rational, ...], Rational, Rational]:
    """One row of an access relation that reads an entire axis of `size`."""
    return (tuple(0 for _ in range(output_rank)), 0, size - 1)


def follows_axis(
    output_rank: int,
    output_axis: int,
    scale: Rational = 1,
    first: Rational = 0,
    last: Rational | None = None,
) -> tuple[tuple[Rational, ...], Rational, Rational]:
    """One row that follows `output_axis`, scaled, with first/last offsets."""
    row = tuple(scale if j == output_axis else 0 for j in range(output_rank))
    return (row, first, first if last is None else last)


def relation_from_rows(
    rows: Sequence[tuple[tuple[Rational, ...], Rational, Rational]],
) -> AccessRelation:
    return AccessRelation(
        matrix=tuple(r[0] for r in rows),
        first_offset=tuple(r[1] for r in rows),
        last_offset=tuple(r[2] for r in rows),
    )


def window_row(
    output_rank: int,
    output_axis: int,
    stride: int,
    kernel: int,
    dilation: int,
    pad_before: int,
) -> tuple[tuple[Rational, ...], Rational, Rational]:
    """A sliding-window axis: output index o reads inputs o*s - pad .. o*s - pad + (k-1)*d."""
    span = (kernel - 1) * dilation
    return follows_axis(output_rank, output_axis, stride, -pad_before, -pad_before + span)


def identity_relation(rank: int) -> AccessRelation:
    return relation_from_rows([follows_axis(rank, axis) for axis in range(rank)])


def broadcast_relation(input_shape: Sequence[int], output_shape: Sequence[int]) -> AccessRelation:
    """Numpy-style broadcasting: axes aligned from the right; size-1 axes read index 0."""
    out_rank = len(output_shape)
    lead = out_rank - len(input_shape)
    rows = []
    for axis, size in enumerate(input_shape):
        out_axis = axis + lead
        if size == 1 and output_shape[out_axis] != 1:
            rows.append(reads_whole_axis(out_rank, 1))
        else:
            rows.append(follows_axis(out_rank, out_axis))
    return relation_from_rows(rows)
