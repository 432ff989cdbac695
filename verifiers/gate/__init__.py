"""The gate's parts, each readable and testable on its own; `verifiers.gates` ties them.

- `plan`: which rows a task has, in which stage (pure: spec in, rows out);
- `policy`: how often a row runs, when a verdict settles early, what is skipped (pure);
- `table`: the rows created so far, their results, which share one verification (pure);
- `backend`: the one seam to the engine (produce a state, verify one); `DockerBackend`
  is the real one, tests bring an in-memory one;
- `executor`: the bounded thread pool, removal off the critical path, progress;
- `views`: what the verifier is shown for a state under each runtime;
- `runtime`: a task gated under Harbor's runtime alone when only it works;
- `inputs`: `GateInput`, what one run is given;
- `report`: the `GateReport` built from the table.

`plan`, `policy` and `table` import nothing that runs a container (an import contract).
"""
