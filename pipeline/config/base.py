"""What every config model is: strict (an unknown key is an error) and frozen; the default profile's name."""
from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict


DEFAULT_PROFILE = "lite"


class StrictConfig(BaseModel):
    """Base of every config model: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_Strict = StrictConfig
M = TypeVar("M", bound=BaseModel)
