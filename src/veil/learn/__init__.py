"""Learning on released data: how much a model loses when trained on the release."""

from __future__ import annotations

from veil.learn.utility import ModelComparison, compare_models

__all__ = ["ModelComparison", "compare_models"]
