"""`python -m envfactory.cli`: the `envfactory` command without the installed script
(useful from a git worktree, whose code the installed script would not run)."""

from envfactory.cli import main

main()
