"""Severity and confidence: the two scales a rule and a finding are ranked on.

Plain enums without pydantic, so that the engine and the start-up cache (which pickles
them by reference) can use them without importing the rule model's classes.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING


class Severity(str, Enum):
    """How serious a failure is."""

    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"

    @property
    def rank(self) -> int:
        """Its order, info lowest."""
        return ["info", "warning", "error", "critical"].index(self.value)


class Confidence(str, Enum):
    """How sure a finding is."""

    confirmed = "confirmed"
    regression = "regression"
    likely = "likely"
    possible = "possible"

    @property
    def rank(self) -> int:
        """Its order, possible lowest."""
        return {"confirmed": 3, "regression": 2, "likely": 1, "possible": 0}[self.value]


class ReferenceUrl:
    """The web address of a reference (an issue, PR, commit, discussion or doc); shared by the
    validated model and its light copy from the start-up cache."""

    if TYPE_CHECKING:  # the fields of the class this is mixed into (pydantic must not see them here)
        kind: str
        id: str
        repo: str

    @property
    def url(self) -> str:
        """The reference's web address."""
        path = {"issue": "issues", "pr": "pull", "commit": "commit", "discussion": "discussions"}
        if self.kind == "doc":
            return self.id
        return f"https://github.com/{self.repo}/{path[self.kind]}/{self.id}"
