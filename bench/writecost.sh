#!/usr/bin/env bash
# What one task status update costs PostgreSQL, with and without each part of
# the tasks table's indexes and its stored search column (docs/performance.md). Run under a throwaway cluster:
#
#   make build && bin/pmapi devdb exec -- bench/writecost.sh [seconds] [rounds]
#
# Each variant is a copy of the migrated tasks table (LIKE ... INCLUDING ALL:
# its columns, generated column and indexes) with 100,000 rows of the bench's
# shape, with the parts it names. pgbench runs the deliver scenario's update
# (TODO <-> IN_PROGRESS of a random task, its whole row returned) on 4
# connections, then VACUUM cleans up after it (autovacuum is off for these
# tables, so one variant's clean-up never lands in another's figure). The
# figure is the whole cluster's CPU (postmaster, backends, reaped backends,
# checkpointer, WAL writer) over both, per transaction, read from /proc: the
# dead index entries and the GIN pending lists' merge count too.
set -euo pipefail
secs=${1:-15}
rounds=${2:-2}
url=${PMAPI_DATABASE_URL:?run under bin/pmapi devdb exec}
db=writecost
psql -q "$url" -c "drop database if exists $db" -c "create database $db" \
	-c "do \$\$ begin create role pmapi_app; create role pmapi_owner; exception when duplicate_object then null; end \$\$"
dburl=${url/\/postgres\?//$db?}
PMAPI_DATABASE_URL=$dburl bin/pmapi migrate up >/dev/null
datadir=$(psql -At "$dburl" -c 'show data_directory')
pm=$(head -1 "$datadir/postmaster.pid")

# cluster_ticks: the postmaster's own and reaped children's CPU plus every
# live child's, in clock ticks (USER_HZ).
cluster_ticks() {
	local t=0 f
	for p in $pm $(cat /proc/$pm/task/$pm/children); do
		f=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null) || continue
		set -- $f
		t=$((t + ${12} + ${13}))
		[ "$p" = "$pm" ] && t=$((t + ${14} + ${15}))
	done
	echo $t
}

variants=(full nodocidx nodoc notrgm nosearch ns_nops ns_nostatus)
# The variants start from tasks as migration 0015 leaves it (btree indexes
# only) and add or remove one part at a time: 0014's whole search (the stored
# search_doc with its GIN index, and the trigram GIN indexes on title and
# description); search_doc without its index; search_doc with its index; the
# trigram indexes alone; 0015 as is; without the (project, status) index; and
# without the status index too (the update is HOT: no index changes).
variants=(s0014 docnoidx doc trgm s0015 nops hot)
parts() {
	local doc="alter table %s add column search_doc tsvector generated always as (
		setweight(to_tsvector('english'::regconfig, title), 'A') ||
		setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) stored;"
	local docidx="create index on %s using gin (search_doc);"
	local trgm="create index on %s using gin (title gin_trgm_ops); create index on %s using gin (description gin_trgm_ops);"
	case $1 in
	s0014) echo "$doc $docidx $trgm" ;;
	docnoidx) echo "$doc" ;;
	doc) echo "$doc $docidx" ;;
	trgm) echo "$trgm" ;;
	s0015) ;;
	nops) echo "drop index %s_workspace_id_project_id_status_id_idx;" ;;
	hot) echo "drop index %s_workspace_id_project_id_status_id_idx; drop index %s_workspace_id_status_id_idx;" ;;
	esac
}

psql -q "$dburl" <<'SQL'
create function pg_temp.words(n int) returns text language sql as
  $$ select string_agg(substr(md5(random()::text), 1, 4 + (random() * 6)::int), ' ') from generate_series(1, n) $$;
create unlogged table seed as
  select md5(n::text)::uuid as id, n, pg_temp.words(4) as title, pg_temp.words(12) as description
  from generate_series(1, 100000) n;
SQL

ws=00000000-0000-0000-0000-000000000001
for v in "${variants[@]}"; do
	sql=$(parts "$v" | sed "s/%s/w_$v/g")
	psql -q "$dburl" <<SQL
create table w_$v (like tasks including all) with (autovacuum_enabled = off);
$sql
insert into w_$v (workspace_id, id, project_id, title, description, status, priority)
  select '$ws', id, md5((n % 20)::text)::uuid, title, description,
         case n % 2 when 0 then 'TODO' else 'IN_PROGRESS' end, 1 + n % 5 from seed;
vacuum analyze w_$v;
SQL
	cat >"/tmp/writecost-$v.sql" <<SQL
\set n random(1, 100000)
update w_$v as t set status = case t.status when 'TODO' then 'IN_PROGRESS' else 'TODO' end, updated_at = now()
  where t.workspace_id = '$ws' and t.id = md5(:n::text)::uuid returning t.*;
SQL
done

printf '%-30s %8s %10s %12s\n' variant round tps 'PG µs/tx'
for r in $(seq "$rounds"); do
	for v in "${variants[@]}"; do
		psql -q "$dburl" -c checkpoint
		before=$(cluster_ticks)
		out=$(pgbench -n -M prepared -c 4 -j 2 -T "$secs" -f "/tmp/writecost-$v.sql" "$dburl" 2>&1)
		psql -q "$dburl" -c "vacuum w_$v"
		after=$(cluster_ticks)
		tx=$(echo "$out" | awk '/number of transactions actually processed/ {print $NF}' | cut -d/ -f1)
		tps=$(echo "$out" | awk '/^tps/ {printf "%.0f", $3}')
		printf '%-30s %8s %10s %12.0f\n' "$v" "$r" "$tps" "$(echo "($after - $before) * 10000 / $tx" | bc -l)"
	done
done
