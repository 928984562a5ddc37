package probes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// The admin console commands read. The console speaks only the simple
// query protocol and takes one command per query.
const (
	showPoolsSQL   = `SHOW POOLS`
	showStatsSQL   = `SHOW STATS`
	showServersSQL = `SHOW SERVERS`
	showClientsSQL = `SHOW CLIENTS`
	// showDatabasesSQL's pool_size is the watched database's pool size
	// in force: its own, else default_pool_size.
	showDatabasesSQL = `SHOW DATABASES`
)

// Columns are found by name: they come and go between PgBouncer versions
// (cl_active_cancel_req, sv_being_canceled, load_balance_hosts…);
// maxwait_us appeared in 1.8 and is optional, as are the SHOW STATS
// totals (1.8 renamed them).
var poolCols = []string{"database", "cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used", "maxwait"}

// poolSampler reads PgBouncer's admin console on one dedicated connection:
// SHOW POOLS and SHOW STATS every sample, SHOW SERVERS and SHOW CLIENTS
// when an episode needs its PgBouncer link.
type poolSampler struct {
	link      *link
	db        string
	prevStats bouncerStats
	hasPrev   bool
}

// bouncerStats are SHOW STATS totals for the watched database.
type bouncerStats struct {
	xacts, queries, waitUS, xactUS int64
}

func newPoolSampler(dsn, db string, interval time.Duration) (*poolSampler, error) {
	l, err := newLink("pgbouncer", dsn, interval)
	if err != nil {
		return nil, err
	}
	l.cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return &poolSampler{link: l, db: db}, nil
}

// table is the text of one SHOW command's result.
type table struct {
	col  map[string]int
	rows [][]string
}

func (t *table) get(row []string, name string) (string, bool) {
	i, ok := t.col[name]
	if !ok {
		return "", false
	}
	return row[i], true
}

func (t *table) int(row []string, name string) (int64, bool, error) {
	v, ok := t.get(row, name)
	if !ok || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s %q: not a number", name, v)
	}
	return n, true, nil
}

func (p *poolSampler) show(ctx context.Context, conn *pgx.Conn, cmd string) (*table, error) {
	rows, err := conn.Query(ctx, cmd)
	if err != nil {
		return nil, p.failed(cmd, err)
	}
	defer rows.Close()
	t := &table{col: make(map[string]int)}
	for i, f := range rows.FieldDescriptions() {
		t.col[f.Name] = i
	}
	for rows.Next() {
		raw := rows.RawValues() // simple protocol: all text
		row := make([]string, len(raw))
		for i, v := range raw {
			row[i] = string(v)
		}
		t.rows = append(t.rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, p.failed(cmd, err)
	}
	return t, nil
}

// failed is link.failed for a SHOW command, with what to do when the DSN
// does not reach the admin console.
func (p *poolSampler) failed(cmd string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42704" { // PostgreSQL's "unrecognized configuration parameter"
		err = &hintedError{err: err, hint: `the PgBouncer DSN reaches PostgreSQL (directly or through a pooled database), not PgBouncer's admin console: use PgBouncer's port and the database "pgbouncer"`}
	}
	return p.link.failed(fmt.Errorf("%s: %w", cmd, err))
}

// read returns the pools of the watched database and, for the backend
// pids asked for, their PgBouncer links.
func (p *poolSampler) read(ctx context.Context, linkPIDs []int32) (rundir.PoolSample, map[int32]*rundir.BouncerLink, error) {
	var out rundir.PoolSample
	conn, err := p.link.get(ctx)
	if err != nil {
		return out, nil, err
	}
	if err := p.readPools(ctx, conn, &out); err != nil {
		return out, nil, err
	}
	if err := p.readStats(ctx, conn, &out); err != nil {
		return out, nil, err
	}
	if len(linkPIDs) == 0 {
		return out, nil, nil
	}
	links, err := p.readLinks(ctx, conn, linkPIDs)
	return out, links, err
}

// readPools sums SHOW POOLS over the pools of the watched database. No
// pool for it (no client has connected yet) reads as all zeros.
func (p *poolSampler) readPools(ctx context.Context, conn *pgx.Conn, out *rundir.PoolSample) error {
	t, err := p.show(ctx, conn, showPoolsSQL)
	if err != nil {
		return err
	}
	for _, name := range poolCols {
		if _, ok := t.col[name]; !ok {
			return fmt.Errorf("pgbouncer: SHOW POOLS has no %s column (PgBouncer older than 1.8?)", name)
		}
	}
	for _, row := range t.rows {
		if db, _ := t.get(row, "database"); db != p.db {
			continue
		}
		var v [8]int64
		for i, name := range []string{"cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used", "maxwait", "maxwait_us", "sv_login"} {
			if v[i], _, err = t.int(row, name); err != nil {
				return fmt.Errorf("pgbouncer: SHOW POOLS: %w", err)
			}
		}
		out.ClActive += int(v[0])
		out.ClWaiting += int(v[1])
		out.SvActive += int(v[2])
		out.SvIdle += int(v[3])
		out.SvUsed += int(v[4])
		out.SvLogin += int(v[7])
		out.MaxWaitSeconds = max(out.MaxWaitSeconds, float64(v[5])+float64(v[6])/1e6)
		// Clients also wait while PgBouncer opens a server connection for
		// them (sv_login): only waiting with none being opened means the
		// pool has nothing left to give.
		out.Exhausted = out.Exhausted || v[1] > 0 && v[7] == 0
	}
	return nil
}

// poolSize reads the watched database's pool_size from SHOW DATABASES
// (the size of each of its pools, one per user); 0 when PgBouncer does not
// list it.
func (p *poolSampler) poolSize(ctx context.Context) (int, error) {
	conn, err := p.link.get(ctx)
	if err != nil {
		return 0, err
	}
	t, err := p.show(ctx, conn, showDatabasesSQL)
	if err != nil {
		return 0, err
	}
	for _, row := range t.rows {
		if name, _ := t.get(row, "name"); name != p.db {
			continue
		}
		n, _, err := t.int(row, "pool_size")
		if err != nil {
			return 0, fmt.Errorf("pgbouncer: SHOW DATABASES: %w", err)
		}
		return int(n), nil
	}
	return 0, nil
}

// readStats fills the SHOW STATS deltas: none on the first read, after
// PgBouncer restarted (the totals went back), or when this PgBouncer's
// SHOW STATS lacks the totals.
func (p *poolSampler) readStats(ctx context.Context, conn *pgx.Conn, out *rundir.PoolSample) error {
	t, err := p.show(ctx, conn, showStatsSQL)
	if err != nil {
		return err
	}
	var cur bouncerStats
	found := false
	for _, row := range t.rows {
		if db, _ := t.get(row, "database"); db != p.db {
			continue
		}
		var ok [4]bool
		var errs [4]error
		cur.xacts, ok[0], errs[0] = t.int(row, "total_xact_count")
		cur.queries, ok[1], errs[1] = t.int(row, "total_query_count")
		cur.waitUS, ok[2], errs[2] = t.int(row, "total_wait_time")
		cur.xactUS, ok[3], errs[3] = t.int(row, "total_xact_time")
		for _, e := range errs {
			if e != nil {
				return fmt.Errorf("pgbouncer: SHOW STATS: %w", e)
			}
		}
		found = !slices.Contains(ok[:], false)
	}
	if !found {
		p.hasPrev = false
		return nil
	}
	prev, had := p.prevStats, p.hasPrev
	p.prevStats, p.hasPrev = cur, true
	d := bouncerStats{cur.xacts - prev.xacts, cur.queries - prev.queries, cur.waitUS - prev.waitUS, cur.xactUS - prev.xactUS}
	if !had || d.xacts < 0 || d.queries < 0 || d.waitUS < 0 || d.xactUS < 0 {
		return nil
	}
	out.Xacts, out.Queries = d.xacts, d.queries
	out.WaitSeconds, out.XactSeconds = float64(d.waitUS)/1e6, float64(d.xactUS)/1e6
	return nil
}

// readLinks joins SHOW SERVERS (remote_pid is the backend's pid) to SHOW
// CLIENTS (a server's link is its client's ptr).
func (p *poolSampler) readLinks(ctx context.Context, conn *pgx.Conn, pids []int32) (map[int32]*rundir.BouncerLink, error) {
	servers, err := p.show(ctx, conn, showServersSQL)
	if err != nil {
		return nil, err
	}
	links := make(map[int32]*rundir.BouncerLink)
	clientOf := make(map[string]*rundir.BouncerLink)
	for _, row := range servers.rows {
		pid, ok, err := servers.int(row, "remote_pid")
		if err != nil || !ok || !slices.Contains(pids, int32(pid)) {
			continue
		}
		l := &rundir.BouncerLink{}
		l.User, _ = servers.get(row, "user")
		l.Database, _ = servers.get(row, "database")
		l.ServerState, _ = servers.get(row, "state")
		port, _, _ := servers.int(row, "local_port")
		l.ServerLocalPort = int(port)
		links[int32(pid)] = l
		if ptr, _ := servers.get(row, "link"); ptr != "" {
			clientOf[ptr] = l
		}
	}
	if len(clientOf) == 0 {
		return links, nil
	}
	clients, err := p.show(ctx, conn, showClientsSQL)
	if err != nil {
		return links, err
	}
	for _, row := range clients.rows {
		ptr, _ := clients.get(row, "ptr")
		l := clientOf[ptr]
		if l == nil {
			continue
		}
		l.ClientAddr, _ = clients.get(row, "addr")
		port, _, _ := clients.int(row, "port")
		l.ClientPort = int(port)
		l.ClientApplicationName, _ = clients.get(row, "application_name")
		if ct, ok := clients.get(row, "connect_time"); ok {
			if t, err := time.Parse("2006-01-02 15:04:05 MST", ct); err == nil {
				l.ClientConnectTime = t.UTC()
			}
		}
	}
	return links, nil
}

func (p *poolSampler) close() { p.link.close() }
