#!/bin/bash
set -euo pipefail
cd /app

# step 1: read the release metadata, prepare a scratch stage and the render helper
version=$(tr -d '[:space:]' < /app/VERSION)
site_name=$(sed -n 's/^SITE_NAME=//p' /app/site.conf)
release="site-${version}"
stage=$(mktemp -d)
mkdir -p "$stage/$release"
# escape the replacement text for sed: the site name contains '&'
sed_escape() { printf '%s' "$1" | sed -e 's/[\/&|\\]/\\&/g'; }
render() {
  sed -e "s|{{VERSION}}|$(sed_escape "$version")|g" \
      -e "s|{{SITE_NAME}}|$(sed_escape "$site_name")|g" "$1" > "$2"
}

# step 2: render the templates and copy the static files into the stage
cd /app/site
find . -path ./drafts -prune -o -type f -print | sort | while IFS= read -r f; do
  rel=${f#./}
  mkdir -p "$stage/$release/$(dirname "$rel")"
  case "$rel" in
    *.html.in) render "$rel" "$stage/$release/${rel%.in}" ;;
    *)         cp -p "$rel" "$stage/$release/$rel" ;;
  esac
done

# step 3: pack the staged release
mkdir -p /app/dist
tar -C "$stage" -czf "/app/dist/${release}.tar.gz" "$release"

# step 4: write the checksum file and drop the stage
cd /app/dist
sha256sum "${release}.tar.gz" > SHA256SUMS
rm -rf "$stage"
