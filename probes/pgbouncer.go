package probes

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// showPoolsSQL lists PgBouncer's pools, one row per (database, user).
const showPoolsSQL = `SHOW POOLS`

// The SHOW POOLS columns read. Columns come and go between PgBouncer
// versions (cl_active_cancel_req, sv_being_canceled, load_balance_hosts…),
// so they are found by name; maxwait_us appeared in 1.8 and is optional.
const (
	colDatabase  = "database"
	colClActive  = "cl_active"
	colClWaiting = "cl_waiting"
	colSvActive  = "sv_active"
	colSvIdle    = "sv_idle"
	colSvUsed    = "sv_used"
	colMaxWait   = "maxwait"
	colMaxWaitUS = "maxwait_us"
)

// poolSampler reads SHOW POOLS from PgBouncer's admin console on one
// dedicated connection.
type poolSampler struct {
	link *link
	db   string
}

func newPoolSampler(dsn, db string, interval time.Duration) (*poolSampler, error) {
	l, err := newLink("pgbouncer", dsn, interval)
	if err != nil {
		return nil, err
	}
	// The admin console speaks only the simple query protocol.
	l.cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return &poolSampler{link: l, db: db}, nil
}

func (p *poolSampler) sample(ctx context.Context, s *Sample) error {
	pools, err := p.read(ctx)
	if err != nil {
		return err
	}
	s.PgBouncer = &pools
	return nil
}

// read sums SHOW POOLS over the pools of the watched database. No pool
// for it (no client has connected yet) reads as all zeros.
func (p *poolSampler) read(ctx context.Context) (PoolSample, error) {
	var out PoolSample
	conn, err := p.link.get(ctx)
	if err != nil {
		return out, err
	}
	rows, err := conn.Query(ctx, showPoolsSQL)
	if err != nil {
		return out, p.link.failed(err)
	}
	defer rows.Close()
	col := make(map[string]int)
	for i, f := range rows.FieldDescriptions() {
		col[f.Name] = i
	}
	for _, name := range []string{colDatabase, colClActive, colClWaiting, colSvActive, colSvIdle, colSvUsed, colMaxWait} {
		if _, ok := col[name]; !ok {
			return out, fmt.Errorf("pgbouncer: SHOW POOLS has no %s column (PgBouncer too old?)", name)
		}
	}
	for rows.Next() {
		// Simple protocol: every value arrives as text.
		raw := rows.RawValues()
		if string(raw[col[colDatabase]]) != p.db {
			continue
		}
		var row PoolSample
		var wait, waitUS int
		for _, f := range []struct {
			name string
			dst  *int
		}{
			{colClActive, &row.ClActive}, {colClWaiting, &row.ClWaiting}, {colSvActive, &row.SvActive},
			{colSvIdle, &row.SvIdle}, {colSvUsed, &row.SvUsed}, {colMaxWait, &wait}, {colMaxWaitUS, &waitUS},
		} {
			i, ok := col[f.name]
			if !ok {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(string(raw[i])))
			if err != nil {
				return out, fmt.Errorf("pgbouncer: SHOW POOLS %s %q: not a number", f.name, raw[i])
			}
			*f.dst = n
		}
		out.ClActive += row.ClActive
		out.ClWaiting += row.ClWaiting
		out.SvActive += row.SvActive
		out.SvIdle += row.SvIdle
		out.SvUsed += row.SvUsed
		out.MaxWaitSeconds = max(out.MaxWaitSeconds, float64(wait)+float64(waitUS)/1e6)
	}
	if err := rows.Err(); err != nil {
		return out, p.link.failed(err)
	}
	return out, nil
}

func (p *poolSampler) close() { p.link.close() }
