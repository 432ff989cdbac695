#!/bin/bash
# The project's own acceptance check for the users list.
set -e
cd /srv/data
printf 'alice\nbob\ncarol\ndave\nerin\n' | cmp -s - out/users.txt
