"""The eval's table for people: one row per target and a total, then each failure."""

from __future__ import annotations

from envfactory.core.models import EvalRun, EvalTotals

HEAD = f"{'target':<34} {'ok':>5} {'rate':>5} {'turns':>6} {'calls':>6} {'tok in':>8} "
HEAD += f"{'tok out':>8} {'wall s':>8}  failures"


def _row(name: str, t: EvalTotals) -> str:
    causes = ", ".join(f"{c}×{n}" for c, n in sorted(t.causes.items())) or "-"
    return (
        f"{name[:34]:<34} {t.successes:>2}/{t.attempts:<2} {t.success_rate:>5.2f} "
        f"{t.turns:>6.1f} {t.tool_calls:>6.1f} {t.prompt_tokens:>8} {t.completion_tokens:>8} "
        f"{t.wall_s:>8.1f}  {causes}"
    )


def render_table(run: EvalRun) -> str:
    where = f" at {run.base_url}" if run.base_url else ""
    lines = [
        f"eval {run.id}: role {run.role.value}, model {run.model}{where}, k={run.k}, "
        f"on {run.source}",
        HEAD,
    ]
    lines += [_row(t, run.totals(t)) for t in run.targets()]
    total = run.totals()
    lines.append(_row("TOTAL", total))
    if total.step_causes:
        seen = ", ".join(f"{c}×{n}" for c, n in sorted(total.step_causes.items()))
        lines.append(f"model behaviour over all turns: {seen}")
    failed = [a for a in run.attempts if not a.success]
    if failed:
        lines.append("failures:")
        lines += [
            f"  {a.target} #{a.index}: {a.cause.value if a.cause else '?'} — {a.detail}"
            for a in failed
        ]
    return "\n".join(lines)
