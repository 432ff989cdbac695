#!/bin/bash
set -euo pipefail
cd /app
git config user.name "Ines Varga"
git config user.email ines@payroll.example
git checkout -q release/2.4

# step 1: backport the rounding fix
git cherry-pick -x 6e2a95be349a84a43c3c96fa3df956dad4f0648b

# step 2: backport the zero-amount fix
git cherry-pick -x 5cd4817b5da2f3246edfde8ff29f544a8e473332
