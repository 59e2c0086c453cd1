#!/bin/sh
# Container entrypoint: `router` and `node` start those processes (configured
# by TALLY_* environment variables or flags); anything else is a tally CLI
# command. exec, so signals (SIGTERM from the runtime) reach node directly.
set -e
cd /app
case "$1" in
  router) shift; exec node dist/router/main.js "$@" ;;
  node) shift; exec node dist/node/main.js "$@" ;;
  *) exec node bin/tally.mjs "$@" ;;
esac
