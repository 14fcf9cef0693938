"""Amounts of CPU, memory and GPUs, and how users write them.

CPU is kept in millicores and memory in bytes so that sums are exact; the
parsers accept what people type in forms and what Kubernetes prints
("500m", "1.5", "2Gi", "512M").

Every amount has a ceiling far above any real machine but inside a 32-bit
(CPU) or 64-bit (memory) database column, and must be a finite number:
1e308, NaN or "9" * 400 are refused with a sentence, never an overflow. The
text patterns are shared with the REST API, which states them in its
OpenAPI document.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import Invalid

# Whole cores ("2"), fractions ("0.5", ".5"; at least 0.001) or millicores ("500m"); not 0.
CPU_PATTERN = r"^(?:0*[1-9][0-9]*m|0*[1-9][0-9]*(?:\.[0-9]+)?|0*\.(?:[1-9]|0[1-9]|00[1-9])[0-9]*)$"
# A number above 0 with an optional SI or binary unit: "512Mi", "2G", "1.5 GiB", "1000".
MEMORY_PATTERN = (
    r"^(?:0*[1-9][0-9]*(?:\.[0-9]+)?|0*\.[0-9]*[1-9][0-9]*) ?(?:[kKmMgGtTpP][iI]?[bB]?|[bB])?$"
)
# What the parsers read (forms too): also zero, which they refuse with a sentence of its own.
_CPU = re.compile(r"^(?:[0-9]+m|[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$")
_MEMORY = re.compile(
    r"^([0-9]+(?:\.[0-9]+)?|\.[0-9]+) ?([kmgtp]i?b?|b)?$", re.IGNORECASE | re.ASCII
)
# At most 32 characters are read: no real amount is longer.
MAX_AMOUNT_TEXT = 32
MIN_CPU_MILLI = 1
MAX_CPU_MILLI = 10**9  # a million cores, inside a 32-bit column
MAX_CPU_CORES = MAX_CPU_MILLI // 1000
MAX_MEMORY = 2**50  # 1 PiB
MAX_GPUS = 1024  # GPUs in one quota dimension (per type)
MAX_NOTEBOOKS = 100_000  # running notebooks one quota allows
_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
    "p": 10**15,
    "ki": 2**10,
    "mi": 2**20,
    "gi": 2**30,
    "ti": 2**40,
    "pi": 2**50,
}


def _shown(value: object) -> str:
    """The value as typed, cut short: an error message never echoes a megabyte."""
    try:
        text = str(value)
    except ValueError:  # an integer with more digits than Python will print
        return "a number with thousands of digits"
    return text if len(text) <= MAX_AMOUNT_TEXT else text[:MAX_AMOUNT_TEXT] + "…"


def parse_cpu(value: str | float | int) -> int:
    """Return millicores for "2", "0.5", 1.5 or "500m"; between 1m and a million cores."""
    bad = f"'{_shown(value)}' is not a CPU amount: write cores like 2 or 0.5, or 500m"
    if isinstance(value, bool):
        raise Invalid(bad)
    if isinstance(value, (int, float)):
        try:
            milli = float(value) * 1000
        except OverflowError:  # an integer beyond any float
            milli = math.inf if value > 0 else -math.inf
        if math.isnan(milli):
            raise Invalid(bad)
    else:
        text = str(value).strip()
        if len(text) > MAX_AMOUNT_TEXT or not _CPU.fullmatch(text):
            raise Invalid(bad)
        milli = int(text[:-1]) if text.endswith("m") else float(text) * 1000
    if not milli >= MIN_CPU_MILLI:
        raise Invalid(
            f"CPU must be more than 0 (at least 1m, a thousandth of a core); got '{_shown(value)}'"
        )
    if milli > MAX_CPU_MILLI:
        raise Invalid(f"CPU can be at most {MAX_CPU_CORES:,} cores; got '{_shown(value)}'")
    return round(milli)


def parse_memory(value: str | int) -> int:
    """Return bytes for "2G", "2GiB", "512Mi" or a plain number of bytes; at most 1 PiB."""
    if isinstance(value, bool):
        raise Invalid(f"'{value}' is not a memory amount: write it like 2G, 512Mi or 1.5GiB")
    if isinstance(value, int):
        amount = value
    else:
        text = str(value).strip()
        match = _MEMORY.fullmatch(text) if len(text) <= MAX_AMOUNT_TEXT else None
        if not match:
            raise Invalid(
                f"'{_shown(value)}' is not a memory amount: write it like 2G, 512Mi or 1.5GiB"
            )
        unit = (match.group(2) or "").lower().removesuffix("b")
        amount = int(float(match.group(1)) * _UNITS[unit])
    if amount <= 0:
        raise Invalid(f"memory must be more than 0; got '{_shown(value)}'")
    if amount > MAX_MEMORY:
        raise Invalid(f"memory can be at most 1 PiB; got '{_shown(value)}'")
    return amount


def format_cpu(milli: int) -> str:
    cores = milli / 1000
    return f"{cores:g} CPU" if cores == 1 else f"{cores:g} CPUs"


def format_memory(amount: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if amount >= size:
            return f"{amount / size:.3g} {unit}"
    return f"{amount} B"


def format_gpus(count: int, gpu_type: str) -> str:
    return f"{count} GPU{'s' if count != 1 else ''} of type '{gpu_type}'"


@dataclass(frozen=True)
class Resources:
    """What a notebook asks for, or what a set of notebooks holds together."""

    cpu_milli: int = 0
    memory: int = 0
    gpus: Mapping[str, int] = field(default_factory=dict)
    notebooks: int = 0

    def __add__(self, other: Resources) -> Resources:
        gpus = dict(self.gpus)
        for name, count in other.gpus.items():
            gpus[name] = gpus.get(name, 0) + count
        return Resources(
            cpu_milli=self.cpu_milli + other.cpu_milli,
            memory=self.memory + other.memory,
            gpus={k: v for k, v in gpus.items() if v},
            notebooks=self.notebooks + other.notebooks,
        )

    @classmethod
    def for_notebook(
        cls, cpu_milli: int, memory: int, gpu_type: str | None, gpus: int
    ) -> Resources:
        """The resources one running notebook holds."""
        return cls(
            cpu_milli=cpu_milli,
            memory=memory,
            gpus={gpu_type: gpus} if gpu_type and gpus else {},
            notebooks=1,
        )

    @classmethod
    def total(cls, items: list[Resources]) -> Resources:
        result = cls()
        for item in items:
            result = result + item
        return result
