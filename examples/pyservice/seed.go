package pyservice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// schema is the service's tables. Seed creates them if they are not there.
const schema = `
CREATE TABLE IF NOT EXISTS users (
	id         bigserial PRIMARY KEY,
	email      text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS api_tokens (
	token      text PRIMARY KEY,
	user_id    bigint NOT NULL REFERENCES users (id),
	active     boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS api_tokens_user_id ON api_tokens (user_id);
CREATE TABLE IF NOT EXISTS runs (
	id         bigserial PRIMARY KEY,
	user_id    bigint NOT NULL REFERENCES users (id),
	name       text NOT NULL DEFAULT 'run',
	created_at timestamptz NOT NULL DEFAULT now(),
	done_at    timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS upstream_calls (
	id          bigserial PRIMARY KEY,
	user_id     bigint NOT NULL REFERENCES users (id),
	url         text NOT NULL,
	started_at  timestamptz NOT NULL,
	finished_at timestamptz,
	status      integer
);
CREATE INDEX IF NOT EXISTS upstream_calls_user_started ON upstream_calls (user_id, started_at);
`

// UserEmail is the email of the i-th user Seed makes (from 0).
func UserEmail(i int) string { return fmt.Sprintf("user%03d@pyservice.test", i) }

// Seed creates the service's schema in dsn's database (users, api_tokens,
// runs, upstream_calls; kept if there) and makes sure users users exist
// (UserEmail(0) …), each given a new random bearer token. It returns the
// tokens in user order: tokens[i] is UserEmail(i)'s. The tokens are
// secrets.
func Seed(ctx context.Context, dsn string, users int) (tokens []string, err error) {
	if users < 1 {
		return nil, fmt.Errorf("pyservice: seed %d users: want at least one", users)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pyservice: seed: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, schema); err != nil {
		return nil, fmt.Errorf("pyservice: seed: create the schema: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for i := range users {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO users (email) VALUES ($1)
			ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email RETURNING id`, UserEmail(i)).Scan(&id); err != nil {
			return nil, fmt.Errorf("pyservice: seed: user %d: %w", i, err)
		}
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		token := "pys_" + hex.EncodeToString(b)
		if _, err := tx.Exec(ctx, `INSERT INTO api_tokens (token, user_id) VALUES ($1, $2)`, token, id); err != nil {
			return nil, fmt.Errorf("pyservice: seed: token of user %d: %w", i, err)
		}
		tokens = append(tokens, token)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("pyservice: seed: %w", err)
	}
	return tokens, nil
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreateDatabase creates, through adminDSN (a role that may create roles
// and databases: a superuser), a login role and a database both called
// name, the database owned by the role, and returns a DSN of the role for
// that database on the same server (a password of its own, sslmode as
// adminDSN's, no application_name). The role is reused if it exists; a
// database of that name that exists already is an error.
func CreateDatabase(ctx context.Context, adminDSN, name string) (string, error) {
	if !identRE.MatchString(name) {
		return "", fmt.Errorf("pyservice: database name %q: want lower-case letters, digits and _", name)
	}
	cfg, err := pgx.ParseConfig(adminDSN)
	if err != nil {
		return "", fmt.Errorf("pyservice: admin DSN: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("pyservice: connect as admin: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	password := hex.EncodeToString(b)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	verb := "CREATE"
	if exists {
		verb = "ALTER"
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`%s ROLE %s LOGIN PASSWORD '%s'`, verb, name, password)); err != nil {
		return "", fmt.Errorf("pyservice: role %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, name, name)); err != nil {
		return "", fmt.Errorf("pyservice: database %s: %w", name, err)
	}
	sslmode := "disable"
	if cfg.TLSConfig != nil {
		sslmode = "require"
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(name, password),
		Host:     net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		Path:     "/" + name,
		RawQuery: "sslmode=" + sslmode,
	}
	return u.String(), nil
}

// Database is a seeded database of the service, as a test or an example
// uses it: the DSN the service connects with, a probe's DSN for the same
// database, and one bearer token per seeded user.
type Database struct {
	DSN, ProbeDSN string
	Tokens        []string
}

// SeedDatabase creates database name (CreateDatabase), seeds it with
// users (Seed), and points probeDSN — a pg_monitor role's DSN on the same
// server — at it: the steps every test of the service on a local stack
// repeated.
func SeedDatabase(ctx context.Context, adminDSN, probeDSN, name string, users int) (*Database, error) {
	dsn, err := CreateDatabase(ctx, adminDSN, name)
	if err != nil {
		return nil, err
	}
	tokens, err := Seed(ctx, dsn, users)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(probeDSN)
	if err != nil {
		return nil, fmt.Errorf("pyservice: probe DSN: %w", err)
	}
	u.Path = "/" + name
	return &Database{DSN: dsn, ProbeDSN: u.String(), Tokens: tokens}, nil
}
