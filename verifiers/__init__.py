"""Model-free reward checks: verifier runner, gates, shortcut probes, task formats."""
