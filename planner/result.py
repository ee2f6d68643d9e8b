"""What a plan is made of: each fitting layout's result, the sensitivity to inferred figures, and
the plan for one model, workload and cluster (``planner.plan`` computes them)."""

from __future__ import annotations

from planner.hardware import Cluster
from planner.layouts import Layout
from planner.memory import MemoryUse
from planner.models import ModelSpec, ServeWorkload, TrainWorkload
from planner.step import Options, StepCost
from records.frozen import record

#: The sensitivity of a plan to an inferred bandwidth: the result at these multiples of it.
SENSITIVITY_FACTORS = (0.5, 2.0)

Workload = ServeWorkload | TrainWorkload


@record
class LayoutResult:
    """One layout that fits: its memory per GPU, its step (serving: one decode step with its share
    of chunked prefill), the prefill pass of one prompt (serving), tokens/s of the whole cluster, or
    the ``problem`` that leaves it without a time; serving also its ``concurrency`` (conversations
    at once on the cluster), TPOT and TTFT in seconds, and ``decode_s``: the same step with no
    prompt mixed in (what the output tokens alone take; the rest of TPOT is the prompts')."""

    layout: Layout
    memory: MemoryUse
    step: StepCost
    prefill: StepCost | None
    tokens_per_s: float | None
    problem: str | None = None
    concurrency: float | None = None
    tpot_s: float | None = None
    ttft_s: float | None = None
    decode_s: float | None = None

    @property
    def tokens_per_s_per_user(self) -> float | None:
        """Serving: output tokens/s one conversation sees (1 / TPOT)."""
        return None if not self.tpot_s else 1 / self.tpot_s


@record
class Sensitivity:
    """The best layout's tokens/s with one link's bandwidth at each of ``SENSITIVITY_FACTORS``."""

    link: str
    basis: str
    tokens_per_s: tuple[float | None, ...]


@record
class Plan:
    """Everything the planner says about one model, workload and cluster."""

    model: ModelSpec
    workload: Workload
    cluster: Cluster
    options: Options
    results: tuple[LayoutResult, ...]
    fits: str
    reason: str | None = None
    sensitivity: tuple[Sensitivity, ...] = ()

    @property
    def min_gpus(self) -> int | None:
        """The fewest GPUs one model replica fits on (TP x PP x EP of the smallest fitting layout)."""
        return min((r.layout.replica_gpus for r in self.results), default=None)

    @property
    def best(self) -> LayoutResult | None:
        return self.results[0] if self.results and self.results[0].tokens_per_s is not None else None

    @property
    def cluster_usd_per_hour(self) -> float | None:
        price = self.cluster.node.usd_per_hour
        return None if price is None else price * self.cluster.nodes
