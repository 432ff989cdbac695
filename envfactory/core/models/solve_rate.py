"""Solve-rate bands: how many of k judges must solve a task for it to be worth publishing.

A task no judge solves is unproven (nothing shows it can be done); one that every judge
solves may be too easy to teach anything. The accepted band is [min, max] over the
fraction of judges whose final state earned reward 1. A rate of 0 is never in the band.

The band comes from the settings (`ENVFACTORY_GATES__MIN_SOLVE_RATE` / `__MAX_SOLVE_RATE`)
unless the seed sets one (`constraints.min_solve_rate` / `max_solve_rate`): a seed that sets
either bound sets the whole band, the other bound taking its widest value (0 or 1), so a
seed's band is never mixed with a setting into an empty one.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from .base import Model

#: where a measured rate falls: inside the band, below it (or 0), above it
SolveRateVerdict = Literal["in_band", "unproven", "too_easy"]


class SolveRateBand(Model):
    min: float = Field(default=0.0, ge=0.0, le=1.0)
    max: float = Field(default=1.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min > self.max:
            raise ValueError(
                f"the solve-rate band is empty: min_solve_rate {self.min} is above "
                f"max_solve_rate {self.max}; make min_solve_rate <= max_solve_rate"
            )
        return self

    @classmethod
    def for_seed(cls, min_rate: float | None, max_rate: float | None) -> SolveRateBand | None:
        """A seed's own band when it sets either bound (the other at its widest), else None
        (the settings' band applies)."""
        if min_rate is None and max_rate is None:
            return None
        return cls(min=min_rate or 0.0, max=1.0 if max_rate is None else max_rate)

    def verdict(self, rate: float) -> SolveRateVerdict:
        if rate <= 0.0 or rate < self.min:
            return "unproven"
        return "too_easy" if rate > self.max else "in_band"

    def text(self) -> str:
        return f"[{self.min:g}, {self.max:g}]"


class SolveRate(Model):
    """A measured judge solve rate and the band it was held against (gate report, pack)."""

    judges: int = Field(ge=1)  # k, the judges planned
    solved: int = Field(ge=0)  # judges whose final state earned reward 1
    rate: float = Field(ge=0.0, le=1.0)
    band: SolveRateBand = SolveRateBand()
    verdict: SolveRateVerdict

    @classmethod
    def measure(cls, judges: int, solved: int, band: SolveRateBand) -> SolveRate:
        rate = min(solved, judges) / max(1, judges)
        return cls(judges=judges, solved=solved, rate=rate, band=band, verdict=band.verdict(rate))

    def text(self) -> str:
        return (
            f"{self.solved} of {self.judges} judges solved it (rate {self.rate:.2f}, "
            f"band {self.band.text()}): {self.verdict.replace('_', ' ')}"
        )
