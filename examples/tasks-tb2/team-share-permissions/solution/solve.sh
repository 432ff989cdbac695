#!/bin/bash
set -euo pipefail

groupadd --gid 1500 analysts

useradd --create-home --shell /bin/bash --groups analysts maria
useradd --create-home --shell /bin/bash --groups analysts tom

mkdir -p /app/shared
chown root:analysts /app/shared
chmod 2770 /app/shared

# Write the file as maria so she owns it; the setgid bit gives it the group
su - maria -c "echo 'hello analysts' > /app/shared/welcome.txt"
