#!/bin/bash
# BROKEN ON PURPOSE (broken-accepts-noop): checks that a mode is set, not which one.
grep -Eq '^mode *= *[a-z]+' /app/settings.ini
