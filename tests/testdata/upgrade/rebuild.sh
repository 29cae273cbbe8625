#!/bin/sh
# Rebuilds one upgrade fixture from the commit it was made at.
#
#   tests/testdata/upgrade/rebuild.sh NAME COMMIT [generate flags]
#
# builds baton at COMMIT in a worktree of its own, runs
# tests/upgrade/generate with that binary, and writes
# tests/testdata/upgrade/NAME. The flags are the generator's:
# -temporal-store postgres for a build whose baton dev has --temporal-store,
# -tools for a build whose baton dev has --tools (baton-tools-1).
set -eu
if [ $# -lt 2 ]; then
	echo "usage: $0 NAME COMMIT [generate flags]" >&2
	exit 2
fi
name=$1
commit=$2
shift 2
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/src" 2>/dev/null; rm -rf "$work"' EXIT
git -C "$repo" worktree add --detach "$work/src" "$commit"
(cd "$work/src" && go build -o "$work/baton" ./cmd/baton)
full=$(git -C "$work/src" rev-parse HEAD)
cd "$repo"
go run ./tests/upgrade/generate -baton "$work/baton" -commit "$full" -out "tests/testdata/upgrade/$name" "$@"
