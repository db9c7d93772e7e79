#!/usr/bin/env bash
# Fails when docs/fsm/ differs from what the machine definitions in the code
# generate. Fix drift with:
#   go run ./cmd/anthill diagram --write-docs docs/fsm
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

go run ./cmd/anthill diagram --write-docs "$tmp/fsm"

if ! diff -ruN docs/fsm "$tmp/fsm"; then
	echo >&2
	echo "docs/fsm is out of date with the state machine definitions." >&2
	echo "Regenerate and commit it:  go run ./cmd/anthill diagram --write-docs docs/fsm" >&2
	exit 1
fi
echo "docs/fsm is up to date."
