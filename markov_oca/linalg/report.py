"""What every solve hands back: its method, its true residual and its iterations, checked."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import SolverError

DIRECT_LIMIT = 1_500  # active states up to which the direct LU is used


@dataclass
class SolveReport:
    method: str
    residual: float
    iterations: int


def checked(report: SolveReport, b: np.ndarray) -> SolveReport:
    """``report``, or SolverError when its residual is not finite or above ``1e-6 max(1, |b|)``.

    Examples
    --------
    >>> checked(SolveReport("direct", 1e-15, 1), np.ones(3)).iterations
    1
    """
    if not np.isfinite(report.residual) or report.residual > 1e-6 * max(1.0, float(np.abs(b).max())):
        raise SolverError(f"{report.method}: residual {report.residual:.3g} is too large")
    return report
