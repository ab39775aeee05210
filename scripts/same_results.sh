#!/bin/sh
# Proves a refactoring changes no result: scripts/same_results.sh OLD_REV [NEW_REV] [options]
# (see scripts/same_results.py --help; docs/architecture.md, "Proving a refactoring changes nothing").
exec python3 "$(dirname "$0")/same_results.py" "$@"
