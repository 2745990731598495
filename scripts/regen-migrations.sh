#!/usr/bin/env bash
# Development only, until the first migration lands: regenerate migrations/0000_init.sql from the
# schema. Serialised with a lock because several people may change schema modules at once.
# Once migrations have landed, use `npm run db:generate` to add a new migration instead.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/beaver-migrations.lock
flock 9
rm -rf migrations
npx drizzle-kit generate --name init
