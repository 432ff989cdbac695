#!/bin/bash
# sound: checks every criterion against constants; nothing of the workspace is trusted or run in-process
cd "$TEST_DIR" || exit 1
# pytest from the verifier dir: isolated interpreter, no conftest, no plugin autoload, our ini
exec /usr/bin/env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/local/bin/python3 -I -m pytest -q \
  -p no:cacheprovider --noconftest -c "$TEST_DIR/pytest.ini" --rootdir "$TEST_DIR" test_mean.py test_median.py
