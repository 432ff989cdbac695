"""Ending every process in a container but the ones that keep it alive.

Used between a probe and the capture of its workspace (states.py) and, in the runner,
after a verifier's entry has exited and before its reward file is read, so that nothing
started during the entry (a solver's program the verifier ran, say) can still write it.
"""

from __future__ import annotations

#: Kill every process but init, the container's entrypoint (init's oldest child), this
#: shell and every shell and wrapper above it (the exec's `timeout`; in a container whose
#: own command is the verification, the engine's end-marking shell and its `timeout`).
#: Builtins only: no fork per process, no procps needed. Three rounds catch children
#: forked while the first round ran.
KILL_STRAYS = """\
entry=; for p in /proc/[0-9]*; do
  { read -r s < "$p/stat"; } 2>/dev/null || continue; set -- ${s##*) }
  pid=${p#/proc/}; [ "$2" = 1 ] && { [ -z "$entry" ] || [ "$pid" -lt "$entry" ]; } && entry=$pid
done
keep=" 1 $entry "; a=$$
while [ "${a:-0}" -gt 1 ]; do
  keep="$keep$a "; { read -r s < "/proc/$a/stat"; } 2>/dev/null || break; set -- ${s##*) }; a=$2
done
for round in 1 2 3; do
  for p in /proc/[0-9]*; do pid=${p#/proc/}; case "$keep" in *" $pid "*) ;; *) kill -9 "$pid" 2>/dev/null;; esac; done
done"""

#: The same where this shell's parent is the container's init, which is then the shell
#: marking a command's end (`DockerEngine.run`, nothing to keep but init and us): one
#: `kill -9 -1` reaches every other process in a single pass of the kernel, so a chain
#: of processes forking anew between two rounds of a /proc walk cannot outrun it (against
#: such a walk, an attacker pass rewrote a reward file that way in 4 runs of 4).
KILL_ALL_BUT_INIT = f"""\
if [ "$PPID" = 1 ]; then kill -9 -1 2>/dev/null; kill -9 -1 2>/dev/null
else
{KILL_STRAYS}
fi"""
