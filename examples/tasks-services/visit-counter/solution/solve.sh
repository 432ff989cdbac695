#!/bin/bash
# step: point the counter at the cache service
sed -i 's/^host = .*/host = cache/' /app/config.ini
# step: and at the port Redis listens on
sed -i 's/^port = .*/port = 6379/' /app/config.ini
