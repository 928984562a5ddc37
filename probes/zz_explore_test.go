package probes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
)

func BenchmarkZZExplore(b *testing.B) {
	env := startStack(b, fixtures.Config{MaxConnections: 1000, IdleInTxTimeout: -1, Users: 10})
	ctx := context.Background()
	openConnections(b, ctx, env.PostgresDSN, 900)
	conn, err := pgx.Connect(ctx, env.ProbeDSN)
	if err != nil {
		b.Fatal(err)
	}
	var me int
	conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&me)
	pg, _ := newPGSampler(env.ProbeDSN, time.Second)
	pg.setup(ctx, "")
	_ = func() time.Duration {
		f := procStat(b, me)
		return time.Duration(atoi(f[14-3])+atoi(f[15-3])) * clockTick
	}
	const n = 100
	var pgPid int
	pg.link.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pgPid)
	pcpu := func() time.Duration {
		f := procStat(b, pgPid)
		return time.Duration(atoi(f[14-3])+atoi(f[15-3])) * clockTick
	}
	from := ` FROM (SELECT a.*, a.xact_start AS in_xact, (a.state LIKE 'idle in transaction%' OR a.pid = ANY($2::int4[])) AS w FROM pg_stat_get_activity(NULL) AS a WHERE a.datid = (SELECT oid FROM pg_database WHERE datname = $1) AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()) AS a`
	counts := strings.SplitN(aggs, "array_agg", 2)[0]
	counts = strings.TrimSuffix(strings.TrimSpace(counts), ",")
	qs := map[string]string{
		"1 agg only":         "SELECT count(*), min(in_xact)" + from,
		"2 counts":           "SELECT " + counts + from,
		"3 counts+arrays":    "SELECT " + aggs + from,
		"4 full":             pg.scanSQL,
		"5 full no pg_stat_database": strings.Replace(pg.scanSQL, "LEFT JOIN pg_stat_database AS d ON $3 AND d.datname = $1", "LEFT JOIN (SELECT 1::int8 AS xact_commit, 1::int8 AS xact_rollback, 1::float8 AS idle_in_transaction_time, 1::int8 AS sessions_fatal, 1::int8 AS sessions_killed, 1::int8 AS sessions_abandoned) AS d ON $3 AND $1 <> ''", 1),
		"6 full pick":        pg.pickSQL,
	}
	var names []string
	for k := range qs {
		names = append(names, k)
	}
	sort.Strings(names)
	best := make([]time.Duration, len(names))
	for round := 0; round < 6; round++ {
		for i, name := range names {
			q := qs[name]
			args := []any{"mcp", []int32{}}
			if strings.Contains(q, "$3") {
				args = append(args, false)
			}
			c0 := pcpu()
			for j := 0; j < n; j++ {
				rows, err := pg.link.conn.Query(ctx, q, args...)
				if err != nil {
					b.Fatal(name, err)
				}
				for rows.Next() {
				}
				rows.Close()
				if rows.Err() != nil {
					b.Fatal(name, rows.Err())
				}
			}
			d := (pcpu() - c0) / n
			if round == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	for i, q := range names {
		println(fmt.Sprintf("server cpu min %6.3f ms: %s", best[i].Seconds()*1000, q))
	}
}

func atoi(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}
