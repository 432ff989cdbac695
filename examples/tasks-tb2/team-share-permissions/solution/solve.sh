#!/bin/bash
set -euo pipefail

groupadd --gid 1500 analysts

useradd --create-home --shell /bin/bash --groups analysts maria
useradd --create-home --shell /bin/bash --groups analysts tom

mkdir -p /app/shared
chown root:analysts /app/shared
chmod 2770 /app/shared

# Write the file as maria so she owns it. The setgid bit should give it the group,
# but some storage drivers (fuse-overlayfs) ignore it for non-root users: set it anyway.
su - maria -c "echo 'hello analysts' > /app/shared/welcome.txt && chgrp analysts /app/shared/welcome.txt"
