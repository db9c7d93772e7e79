#!/usr/bin/env bash
# The packages whose tests need no control plane: every package outside e2e,
# and the architecture tests (e2e/architecture), which read the source tree.
# make test-unit and make coverage run these.
set -euo pipefail
cd "$(dirname "$0")/.."
go list ./... | grep -v /e2e
go list ./e2e/architecture
