"""GPUVisibilityWorkflow with benchmark probes: the workflow without parts
of its work, for timing what each part costs (``culling --probes``, the
visibility benchmark's occupancy table).

:class:`ProbedVisibility` renders ``bench/shaders/visibility_probes.wgsl``,
which extends the workflow's template through its blocks; with ``probe``
"" it is the workflow itself. The production kernel carries no probe.
"""

from __future__ import annotations

from ..errors import GraphValidationError
from ..workflows.visibility import GPUVisibilityWorkflow

__all__ = ["ProbedVisibility", "PROBES"]

#: ProbedVisibility.probe values: "unordered", "nowrite" and "bare" time the
#: workflow without its look-back (tile bases from one atomic counter), its
#: ID writes or both; "coalesced" with its writes done by consecutive lanes
#: (the outputs are then not the workflow's); "resident" is the workflow
#: writing its most concurrently running workgroups into count.
PROBES = ("unordered", "nowrite", "bare", "coalesced", "resident")
TEMPLATE = "bench/shaders/visibility_probes.wgsl"
NAME = "GPUVisibilityWorkflow"


class ProbedVisibility(GPUVisibilityWorkflow):
    """GPUVisibilityWorkflow with :attr:`probe` (one of :data:`PROBES`, or
    "" for the workflow). Probes other than "resident" place no tile late
    (write_lag None means 0 for them, and a lag is refused); "resident"
    needs one tile per workgroup (a pair's workgroup leaves before the
    probe's decrement). Benchmarks only."""

    probe = ""

    @property
    def kernel_template(self) -> str:
        return TEMPLATE if self.probe else GPUVisibilityWorkflow.kernel_template

    @property
    def kernel_values(self) -> dict:
        return {"probe": self.probe} if self.probe else {}

    @property
    def reserved_state_words(self) -> int:
        """The probe's two counters (visibility_probes.wgsl probe_counter)."""
        return 2 if self.probe else 0

    def add_to_graph(self, graph) -> list:
        """Check the probe against the tuning, then add the workflow's node."""
        if self.probe not in ("", *PROBES):
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: probe must be "" or one of {PROBES} '
                                       f"(got {self.probe!r})")
        if self.probe not in ("", "resident"):
            if self.write_lag not in (None, 0):
                raise GraphValidationError(f'{NAME} "{self.id}" tuning: write_lag {self.write_lag!r} needs no '
                                           f'probe but "resident" (got probe {self.probe!r})')
            self.write_lag = 0
        if self.probe == "resident" and self.tiles_per_group == 2:
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: probe "resident" needs tiles_per_group 1')
        return super().add_to_graph(graph)
