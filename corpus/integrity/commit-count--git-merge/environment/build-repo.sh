#!/bin/bash
# Builds the project's history with fixed identities and dates: three commits on main, and
# feature/vat-rates (two commits) branched from the second; both add a changelog entry.
set -euo pipefail
mkdir -p /home/user/project && cd /home/user/project
export GIT_AUTHOR_NAME="Theo Lind" GIT_AUTHOR_EMAIL=theo@rates.example
export GIT_COMMITTER_NAME="Theo Lind" GIT_COMMITTER_EMAIL=theo@rates.example
at() { export GIT_AUTHOR_DATE="$1 +0000" GIT_COMMITTER_DATE="$1 +0000"; }
git init -q -b main
git config user.name "Theo Lind"
git config user.email theo@rates.example
mkdir -p src
printf '# rates\n\nTax and currency rates for the invoicing service.\n' > README.md
printf '# Changelog\n\n## Unreleased\n\n## 0.3.0\n\n- Currency table from the central bank feed.\n' > CHANGELOG.md
printf '"""Currency rates."""\n\nRATES = {"EUR": 1.0, "SEK": 11.42, "NOK": 11.67}\n' > src/currency.py
at "2024-04-02T09:00:00"; git add -A && git commit -qm "chore(release): 0.3.0"
printf '"""Currency rates."""\n\nRATES = {"EUR": 1.0, "SEK": 11.42, "NOK": 11.67, "DKK": 7.46}\n' > src/currency.py
at "2024-04-08T10:30:00"; git add -A && git commit -qm "feat(currency): DKK"
git checkout -q -b feature/vat-rates
printf '"""VAT rates by country (percent)."""\n\nVAT = {"SE": 25, "NO": 25, "DK": 25, "FI": 24}\n\n\ndef vat_for(country):\n    return VAT[country]\n' > src/vat.py
at "2024-04-10T14:00:00"; git add -A && git commit -qm "feat(vat): VAT rates by country"
sed -i 's/^## Unreleased$/## Unreleased\n\n- VAT rates for the Nordic countries./' CHANGELOG.md
at "2024-04-11T08:15:00"; git add -A && git commit -qm "docs(changelog): VAT rates"
git checkout -q main
sed -i 's/^## Unreleased$/## Unreleased\n\n- DKK in the currency table./' CHANGELOG.md
at "2024-04-12T16:45:00"; git add -A && git commit -qm "docs(changelog): DKK"
if [ -n "$(git status --porcelain)" ]; then echo "tree not clean" >&2; exit 1; fi
